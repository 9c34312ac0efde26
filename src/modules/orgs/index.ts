export { orgRoutes } from './orgs.routes.ts';
export { orgTree, orgDetail, addOrg, editOrg, deleteOrgs } from './orgs.service.ts';
export type { OrgNode } from './orgs.schemas.ts';
export { OrgAddRequest, OrgEditRequest } from './orgs.schemas.ts';
