// What the app and other modules may use of auth: its routes, the login-name throttle rule and the rate-limit counters.
export { authRoutes } from './auth.routes.ts';
export { NAME_RULE } from './login.service.ts';
export { hit, hitQuery, lockedFor, lockedForQuery, lockedMs } from './rate-limit.ts';
// The login flow, for the RuoYi dialect (src/compat/ruoyi): the same throttles, log rows and sessions.
export { login, logout, logoutSession } from './login.service.ts';
export { loginClient, recordRefusedLogin } from './login-attempt.ts';
export { issueCaptcha } from './captcha.service.ts';
export { LoginRequest } from './auth.schemas.ts';
