export { loginLogRoutes } from './login-logs.routes.ts';
