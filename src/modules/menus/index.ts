export { menuRoutes } from './menus.routes.ts';
export { menuTree } from './menus.service.ts';
export type { MenuNode } from './menus.schemas.ts';
export { addMenu, editMenu, deleteMenus, menuDetail } from './menus.service.ts';
export { MenuAddRequest, MenuEditRequest } from './menus.schemas.ts';
