export { opLogRoutes } from './op-logs.routes.ts';
