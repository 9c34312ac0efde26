export { opLogRoutes } from './op-logs.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { clearOpLogs, deleteOpLogs, pageOpLogs } from './op-logs.service.ts';
export { OpLogPageRequest } from './op-logs.schemas.ts';
export { exportOpLogs } from './op-logs.routes.ts';
