// What the app, the entries and other modules may use of users: the routes, the first admin, the
// public user row and its statements (the caller's own profile in login-user).
export { userRoutes } from './users.routes.ts';
export { bootstrapAdmin, generatePassword } from './bootstrap.ts';
export { toUser, UserSchema, selfProfileFields, USER_SELECT, USER_FROM, type PublicUserRow, type User } from './user.model.ts';
export { FIND_USER_SQL, userRowQuery, userByLoginNameQuery } from './users.repo.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { addUser, changeUserStatus, deleteUsers, editUser, grantRoles, ownRoles, pageUsers, resetPassword, userDetail } from './users.service.ts';
export { AddUserRequest, EditUserRequest, ResetPasswordRequest, UserPageRequest } from './users.schemas.ts';
// Its export, import template and import, for the RuoYi dialect's Excel buttons (the same files and rules).
export { exportUsers, importTemplateAnswer } from './users.routes.ts';
export { readImportForm } from './import-form.ts';
export { IMPORT_MAX_BYTES, importUsers, type ImportResult } from './users.import.ts';
