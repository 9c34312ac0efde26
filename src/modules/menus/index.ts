export { menuRoutes } from './menus.routes.ts';
// The services and request schemas, for the RuoYi dialect (src/compat/ruoyi): the same rules, another shape.
export { addMenu, deleteMenus, editMenu, menuDetail, menuTree } from './menus.service.ts';
export { MenuAddRequest, MenuEditRequest, type Menu, type MenuNode } from './menus.schemas.ts';
