export { onlineRoutes } from './online.routes.ts';
