export { orgRoutes } from './orgs.routes.ts';
