export { roleRoutes } from './roles.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { addRole, changeRoleStatus, deleteRoles, editRole, grantDataScope, grantMenus, listRoles, ownMenus, pageRoles, roleDetail } from './roles.service.ts';
export { AddRoleRequest, EditRoleRequest, GrantDataScopeRequest, RolePageRequest } from './roles.schemas.ts';
export { DATA_SCOPES, type Role } from './role.model.ts';
export { exportRoles } from './roles.routes.ts';
