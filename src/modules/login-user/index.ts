export { loginUserRoutes } from './login-user.routes.ts';
export { loginUserInformation, type RouterMenu } from './login-user.service.ts';
