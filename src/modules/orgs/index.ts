export { orgRoutes } from './orgs.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { addOrg, deleteOrgs, editOrg, orgDetail, orgTree } from './orgs.service.ts';
export { OrgAddRequest, OrgEditRequest, type Org, type OrgNode } from './orgs.schemas.ts';
