export { loginUserRoutes } from './login-user.routes.ts';
