import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { addMenu, deleteMenus, editMenu, menuDetail, MenuAddRequest, MenuEditRequest, menuTree, type Menu } from '../../modules/menus/index.ts';
import { ourCode, ruoyiCode } from './codes.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData } from './respond.ts';
import { flatten } from './trees.ts';
import { body } from './user.ts';
import { defined, fromRuoyiStatus, idOf, ruoyiTime, statusFilter, text, toRuoyiStatus } from './values.ts';

const TYPES = { directory: 'M', menu: 'C', button: 'F' } as const;
const FROM_TYPE: Record<string, Menu['type']> = { M: 'directory', C: 'menu', F: 'button' };

/** Our menu → RuoYi's SysMenu (flat; `perms` in RuoYi's spelling). */
export function ruoyiMenu(m: Menu) {
  return {
    menuId: m.id,
    parentId: m.parentId,
    menuName: m.title,
    orderNum: m.sort,
    path: m.path ?? '',
    component: m.component ?? '',
    query: '',
    routeName: m.type === 'button' ? '' : (m.name ?? ''),
    isFrame: '1',
    isCache: m.keepAlive ? '0' : '1',
    menuType: TYPES[m.type],
    visible: m.hidden ? '1' : '0',
    status: toRuoyiStatus(m.status),
    perms: m.permission ? ruoyiCode(m.permission) : '',
    icon: m.icon || '#',
    createTime: ruoyiTime(m.createdAt),
    version: m.version,
  };
}

/**
 * RuoYi's menu form → our fields. Not kept (no field here): `query` (route query), `isFrame`
 * (ours: an http(s) path is an external link either way). `perms` is saved in our spelling.
 */
function menuFields(b: Record<string, unknown>) {
  const type = b.menuType === undefined ? undefined : FROM_TYPE[String(b.menuType)];
  if (b.menuType !== undefined && !type) throw badRequest("menuType: must be 'M' (directory), 'C' (menu) or 'F' (button)");
  const perms = text(b.perms);
  return defined({
    parentId: b.parentId === undefined || b.parentId === '' ? undefined : Number(b.parentId),
    title: text(b.menuName),
    type,
    path: b.path === undefined ? undefined : (text(b.path) ?? null),
    component: b.component === undefined ? undefined : (text(b.component) ?? null),
    icon: b.icon === undefined ? undefined : (text(b.icon) && b.icon !== '#' ? String(b.icon) : null),
    permission: b.perms === undefined ? undefined : perms ? ourCode(perms) : null,
    sort: b.orderNum === undefined || b.orderNum === '' ? undefined : Number(b.orderNum),
    hidden: b.visible === undefined ? undefined : b.visible === '1',
    name: b.routeName === undefined ? undefined : (text(b.routeName) ?? null),
    keepAlive: b.isCache === undefined ? undefined : b.isCache === '0',
    status: b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status),
  });
}

export const menuRoutes = new Hono()
  .get('/system/menu/list', ...read('sys:menu:tree'), async (c) => {
    const name = text(c.req.query('menuName'));
    const status = statusFilter(c.req.query('status'));
    const all = flatten(await menuTree(c.get('run')));
    const rows = all.filter((m) => (!name || m.title.includes(name)) && (!status || m.status === status));
    return ajaxData(c, rows.map(ruoyiMenu));
  })
  .get('/system/menu/:id{[0-9]+}', ...read('sys:menu:detail'), async (c) => ajaxData(c, ruoyiMenu(await menuDetail(c.get('run'), idOf(c.req.param('id'), 'menuId')))))
  .post('/system/menu', ...write('sys:menu:add', 'sysMenu', 'add'), async (c) => {
    const fields = menuFields(await body(c));
    // A button has no route: RuoYi's form keeps the path and name it had before the type changed.
    if (fields.type === 'button') Object.assign(fields, { path: null, component: null, name: null });
    const input = parsed(MenuAddRequest, fields);
    c.set('opParams', input);
    await addMenu(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/menu', ...write('sys:menu:edit', 'sysMenu', 'edit'), async (c) => {
    const b = await body(c);
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the menu and try again');
    const fields = menuFields(b);
    if (fields.type === 'button') Object.assign(fields, { path: null, component: null, name: null });
    const input = parsed(MenuEditRequest, { ...fields, id: idOf(b.menuId, 'menuId'), version: b.version });
    c.set('opParams', input);
    await editMenu(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/menu/updateSort', ...write('sys:menu:edit', 'sysMenu', 'edit'), () => {
    throw badRequest('Sorting several menus at once is not supported: edit each menu (its order number) instead');
  })
  .delete('/system/menu/:id{[0-9]+}', ...write('sys:menu:delete', 'sysMenu', 'delete'), async (c) => {
    const ids = [idOf(c.req.param('id'), 'menuId')];
    c.set('opParams', { ids });
    await deleteMenus(c.get('run'), ids);
    return ajax(c);
  });
