export { onlineRoutes } from './online.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { forceLogout, pageOnline } from './online.service.ts';
export { OnlinePageRequest } from './online.schemas.ts';
