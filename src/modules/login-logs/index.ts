export { loginLogRoutes } from './login-logs.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { clearLoginLogs, deleteLoginLogs, pageLoginLogs } from './login-logs.service.ts';
export { LoginLogPageRequest } from './login-logs.schemas.ts';
export { exportLoginLogs } from './login-logs.routes.ts';
