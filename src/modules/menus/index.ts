export { menuRoutes } from './menus.routes.ts';
export { menuTree } from './menus.service.ts';
export type { MenuNode } from './menus.schemas.ts';
