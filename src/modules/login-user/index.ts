export { loginUserRoutes } from './login-user.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { loginUserInformation, updateInfo, updatePassword, type RouterMenu } from './login-user.service.ts';
export { UpdateInfoRequest, UpdatePasswordRequest } from './login-user.schemas.ts';
