import { Hono, type Context } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { menuTree, type MenuNode } from '../../modules/menus/index.ts';
import { orgTree } from '../../modules/orgs/index.ts';
import {
  AddRoleRequest,
  addRole,
  changeRoleStatus,
  DATA_SCOPES,
  deleteRoles,
  EditRoleRequest,
  editRole,
  grantDataScope,
  GrantDataScopeRequest,
  grantMenus,
  ownMenus,
  pageRoles,
  roleDetail,
  RolePageRequest,
  type Role,
} from '../../modules/roles/index.ts';
import { grantRoles, ownRoles, pageUsers, UserPageRequest } from '../../modules/users/index.ts';
import { parsed, read, requireCode, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { fullyCheckedKeys, topmostFullyChecked, withDescendants } from './trees.ts';
import { body, treeSelect } from './user.ts';
import { ruoyiRoleKey, ruoyiUser, SUPER_ROLE_CODE } from './users-map.ts';
import { changedFrom, defined, fromRuoyiStatus, idListOf, idOf, pageOf, ruoyiTime, statusFilter, text, textOrNull, toRuoyiStatus } from './values.ts';

type DataScope = (typeof DATA_SCOPES)[number];
/** RuoYi's data scopes '1'..'5' ↔ ours. */
const SCOPES: Record<string, DataScope> = { '1': 'all', '2': 'custom', '3': 'org', '4': 'orgAndBelow', '5': 'self' };
export const toRuoyiScope = (s: DataScope) => Object.keys(SCOPES).find((k) => SCOPES[k] === s)!;
export function fromRuoyiScope(v: unknown): DataScope {
  const s = SCOPES[String(v)];
  if (!s) throw badRequest("dataScope: must be '1' (all) to '5' (self)");
  return s;
}

/** RuoYi's role key ↔ our code: `admin` is the super admin role's. */
const ourRoleCode = (key: unknown) => (key === 'admin' ? SUPER_ROLE_CODE : key);

export function ruoyiRoleRow(r: Role) {
  return {
    roleId: r.id,
    roleName: r.name,
    roleKey: ruoyiRoleKey(r.code),
    roleSort: r.sort,
    dataScope: toRuoyiScope(r.dataScope),
    menuCheckStrictly: true,
    deptCheckStrictly: true,
    status: toRuoyiStatus(r.status),
    delFlag: '0',
    remark: r.remark ?? '',
    createTime: ruoyiTime(r.createdAt),
    admin: r.code === SUPER_ROLE_CODE,
    flag: false,
    version: r.version,
  };
}

/** Our menu tree → RuoYi's TreeSelect. */
export function menuSelect(nodes: readonly MenuNode[]): { id: number; label: string; children?: unknown[] }[] {
  return nodes.map((m) => ({ id: m.id, label: m.title, ...(m.children.length ? { children: menuSelect(m.children) } : {}) }));
}

const menuIdsOf = (v: unknown) => (Array.isArray(v) ? [...new Set(v.map((x) => idOf(x, 'menuIds')))] : undefined);
const sameSet = (a: readonly number[], b: readonly number[]) => [...a].sort().join() === [...b].sort().join();

/** RuoYi's role form → our fields (roleKey 'admin' is the super admin role's code). */
function roleFields(b: Record<string, unknown>) {
  return defined({
    name: text(b.roleName),
    code: text(ourRoleCode(b.roleKey)),
    sort: b.roleSort === undefined || b.roleSort === '' ? undefined : Number(b.roleSort),
    remark: b.remark === undefined ? undefined : textOrNull(b.remark),
  });
}

/** Adds or removes one role for each of `userIds`, one user at a time (see docs/ruoyi.md: not atomic). */
async function regrant(c: Context, roleId: number, userIds: number[], add: boolean) {
  const run = c.get('run');
  for (const userId of userIds) {
    const held = await ownRoles(run, userId);
    const next = add ? [...new Set([...held, roleId])] : held.filter((r) => r !== roleId);
    if (!sameSet(held, next)) await grantRoles(run, { userId, roleIds: next });
  }
}

/** The role page's filter (its list and its export): RuoYi's names and values in ours. */
export const roleParams = (q: Record<string, string>) => defined({ name: text(q.roleName), code: text(ourRoleCode(q.roleKey)), status: statusFilter(q.status) });

export const roleRoutes = new Hono()
  .get('/system/role/list', ...read('sys:role:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(RolePageRequest, { pageNo, pageSize, sortField: 'sort', sortOrder: 'asc', params: roleParams(q) });
    const page = await pageRoles(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiRoleRow), page.total);
  })
  .get('/system/role/deptTree/:id{[0-9]+}', ...read('sys:role:detail'), async (c) => {
    const run = c.get('run');
    const [role, orgs] = await Promise.all([roleDetail(run, idOf(c.req.param('id'), 'roleId')), orgTree(run)]);
    const checked = role.dataScope === 'custom' ? withDescendants(orgs, new Set(role.scopeOrgIds)) : [];
    return ajax(c, { depts: treeSelect(orgs), checkedKeys: checked });
  })
  .get('/system/role/authUser/allocatedList', ...read('sys:user:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(UserPageRequest, { pageNo, pageSize, params: defined({ roleId: idOf(q.roleId, 'roleId'), loginName: text(q.userName), phone: text(q.phonenumber) }) });
    const page = await pageUsers(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiUser), page.total);
  })
  .get('/system/role/authUser/unallocatedList', ...read('sys:user:page'), async (c) => {
    // Ours has no "does not hold the role" filter: the page of users is read, and those who hold
    // the role are left out of it (a page may hold fewer rows; total counts them out).
    const q = c.req.query();
    const roleId = idOf(q.roleId, 'roleId');
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const params = defined({ loginName: text(q.userName), phone: text(q.phonenumber) });
    const [page, holders] = await Promise.all([
      pageUsers(c.get('deps'), c.get('run'), parsed(UserPageRequest, { pageNo, pageSize, params })),
      pageUsers(c.get('deps'), c.get('run'), parsed(UserPageRequest, { pageNo: 1, pageSize: 1000, params: { ...params, roleId } })),
    ]);
    const held = new Set(holders.records.map((u) => u.id));
    return table(c, page.records.filter((u) => !held.has(u.id)).map(ruoyiUser), Math.max(0, page.total - holders.total));
  })
  .put('/system/role/authUser/cancel', ...write('sys:user:grantRole', 'sysUser', 'grantRole'), async (c) => {
    const b = await body(c);
    const roleId = idOf(b.roleId, 'roleId');
    const userId = idOf(b.userId, 'userId');
    c.set('opParams', { roleId, userIds: [userId], revoke: true });
    await regrant(c, roleId, [userId], false);
    return ajax(c);
  })
  .put('/system/role/authUser/cancelAll', ...write('sys:user:grantRole', 'sysUser', 'grantRole'), async (c) => {
    const roleId = idOf(c.req.query('roleId'), 'roleId');
    const userIds = idListOf(c.req.query('userIds') ?? '', 'userIds');
    c.set('opParams', { roleId, userIds, revoke: true });
    await regrant(c, roleId, userIds, false);
    return ajax(c);
  })
  .put('/system/role/authUser/selectAll', ...write('sys:user:grantRole', 'sysUser', 'grantRole'), async (c) => {
    const roleId = idOf(c.req.query('roleId'), 'roleId');
    const userIds = idListOf(c.req.query('userIds') ?? '', 'userIds');
    c.set('opParams', { roleId, userIds });
    await regrant(c, roleId, userIds, true);
    return ajax(c);
  })
  .put('/system/role/dataScope', ...write('sys:role:grantDataScope', 'sysRole', 'grantDataScope'), async (c) => {
    const b = await body(c);
    const roleId = idOf(b.roleId, 'roleId');
    const dataScope = fromRuoyiScope(b.dataScope);
    let scopeOrgIds: number[] | undefined;
    if (dataScope === 'custom') {
      const checked = new Set(Array.isArray(b.deptIds) ? b.deptIds.map((x) => idOf(x, 'deptIds')) : []);
      scopeOrgIds = topmostFullyChecked(await orgTree(c.get('run')), checked);
    }
    const input = parsed(GrantDataScopeRequest, defined({ roleId, dataScope, scopeOrgIds }));
    c.set('opParams', input);
    await grantDataScope(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/role/changeStatus', ...write('sys:role:changeStatus', 'sysRole', 'changeStatus'), async (c) => {
    const b = await body(c);
    const input = { id: idOf(b.roleId, 'roleId'), status: fromRuoyiStatus(b.status) };
    c.set('opParams', input);
    await changeRoleStatus(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .get('/system/role/:id{[0-9]+}', ...read('sys:role:detail'), async (c) => ajaxData(c, ruoyiRoleRow(await roleDetail(c.get('run'), idOf(c.req.param('id'), 'roleId')))))
  .post('/system/role', ...write('sys:role:add', 'sysRole', 'add'), async (c) => {
    const b = await body(c);
    const run = c.get('run');
    const menuIds = menuIdsOf(b.menuIds) ?? [];
    const input = parsed(AddRoleRequest, { ...roleFields(b), ...(b.status !== undefined && b.status !== '' ? { status: fromRuoyiStatus(b.status) } : {}) });
    c.set('opParams', { ...input, menuIds });
    // The role and its menus in one write, under grantMenu's rules (its code too): a refusal
    // leaves no role behind.
    await addRole(c.get('deps'), run, input, { menuIds });
    return ajax(c);
  })
  .put('/system/role', ...write('sys:role:edit', 'sysRole', 'edit'), async (c) => {
    // The whole role comes back with its menu ids: only what changed goes into our edit, and
    // the menus into our grant when they changed (its own code, sys:role:grantMenu).
    const b = await body(c);
    const run = c.get('run');
    const id = idOf(b.roleId, 'roleId');
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the role and try again');
    const [current, held] = await Promise.all([roleDetail(run, id), ownMenus(run, id)]);
    const changed = changedFrom(roleFields(b), current);
    if (b.status !== undefined && b.status !== '' && fromRuoyiStatus(b.status) !== current.status) changed.status = fromRuoyiStatus(b.status);
    const menuIds = menuIdsOf(b.menuIds);
    const menusChanged = menuIds !== undefined && !sameSet(menuIds, held);
    if (menusChanged) await requireCode(run, 'sys:role:grantMenu', 'menuIds');
    const input = parsed(EditRoleRequest, { id, version: b.version, ...changed });
    c.set('opParams', { ...input, ...(menusChanged ? { menuIds } : {}) });
    if (Object.keys(changed).length) await editRole(c.get('deps'), run, input);
    if (menusChanged) await grantMenus(run, { roleId: id, menuIds: menuIds! });
    return ajax(c);
  })
  .delete('/system/role/:ids{[0-9,]+}', ...write('sys:role:delete', 'sysRole', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'roleIds');
    c.set('opParams', { ids });
    await deleteRoles(c.get('run'), ids);
    return ajax(c);
  })
  // The role form's menu pickers (RuoYi's api/system/menu.js).
  .get('/system/menu/treeselect', ...read('sys:menu:tree'), async (c) => ajaxData(c, menuSelect(await menuTree(c.get('run')))))
  .get('/system/menu/roleMenuTreeselect/:id{[0-9]+}', ...read('sys:role:ownMenu'), async (c) => {
    const run = c.get('run');
    const [menus, granted] = await Promise.all([menuTree(run), ownMenus(run, idOf(c.req.param('id'), 'roleId'))]);
    return ajax(c, { menus: menuSelect(menus), checkedKeys: fullyCheckedKeys(menus, new Set(granted)) });
  });
