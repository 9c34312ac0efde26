export { roleRoutes } from './roles.routes.ts';
export { pageRoles, changeRoleStatus, deleteRoles } from './roles.service.ts';
