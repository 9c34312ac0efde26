// What the app, the entries and other modules may use of users: the routes, the first admin, the
// public user row and its statements (the caller's own profile in login-user).
export { userRoutes } from './users.routes.ts';
export { bootstrapAdmin, generatePassword } from './bootstrap.ts';
export { toUser, UserSchema, selfProfileFields, USER_SELECT, USER_FROM, type PublicUserRow, type User } from './user.model.ts';
export { FIND_USER_SQL, userRowQuery, userByLoginNameQuery } from './users.repo.ts';
export { pageUsers, addUser, editUser, deleteUsers, changeUserStatus, userDetail } from './users.service.ts';
export { AddUserRequest, EditUserRequest } from './users.schemas.ts';
