import { Hono, type Context } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { orgTree, type OrgNode } from '../../modules/orgs/index.ts';
import { listRoles, type Role } from '../../modules/roles/index.ts';
import {
  AddUserRequest,
  addUser,
  changeUserStatus,
  deleteUsers,
  EditUserRequest,
  editUser,
  grantRoles,
  ownRoles,
  pageUsers,
  resetPassword,
  ResetPasswordRequest,
  userDetail,
  UserPageRequest,
} from '../../modules/users/index.ts';
import { listPosts, type Post } from '../../modules/posts/index.ts';
import { loginUserInformation, updateInfo, updatePassword, UpdateInfoRequest, UpdatePasswordRequest } from '../../modules/login-user/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { ruoyiRoleKey, ruoyiUser } from './users-map.ts';
import { changedFrom, dateRangeOf, defined, fromRuoyiStatus, idListOf, idOf, optionalId, pageOf, ruoyiTime, statusFilter, text, textOrNull, toRuoyiStatus } from './values.ts';

/** RuoYi's role picker entry. */
export function ruoyiRole(r: Role, held?: ReadonlySet<number>) {
  return {
    roleId: r.id,
    roleName: r.name,
    roleKey: ruoyiRoleKey(r.code),
    roleSort: r.sort,
    status: toRuoyiStatus(r.status),
    createTime: ruoyiTime(r.createdAt),
    admin: r.code === 'superAdmin',
    flag: held ? held.has(r.id) : false,
  };
}

/** Our organisation tree → RuoYi's TreeSelect `{id, label, disabled, children}`. */
export function treeSelect(nodes: readonly OrgNode[]): { id: number; label: string; disabled: boolean; children?: unknown[] }[] {
  return nodes.map((o) => ({ id: o.id, label: o.name, disabled: o.status !== 'enabled', ...(o.children.length ? { children: treeSelect(o.children) } : {}) }));
}

export const body = async (c: Context) => (await c.req.json().catch(() => { throw badRequest('body: must be a JSON object'); })) as Record<string, unknown>;

/** The form's role ids (RuoYi sends [] for none). */
const roleIdsOf = (v: unknown) => (Array.isArray(v) ? v.map((x) => idOf(x, 'roleIds')) : undefined);

/** The form's post ids (RuoYi sends [] for none). */
const postIdsOf = (v: unknown) => (Array.isArray(v) ? v.map((x) => idOf(x, 'postIds')) : undefined);

/** RuoYi's post picker entry (a disabled post shows greyed out). */
const ruoyiPostOption = (p: Post) => ({ postId: p.id, postCode: p.code, postName: p.name, postSort: p.sort, status: toRuoyiStatus(p.status) });

/** The user form (add) and profile fields in our names; '' means none. */
function userFields(b: Record<string, unknown>) {
  return defined({
    nickName: text(b.nickName),
    email: textOrNull(b.email),
    phone: textOrNull(b.phonenumber),
    remark: textOrNull(b.remark),
    orgId: optionalId(b.deptId, 'deptId') ?? null,
  });
}

/**
 * GET /system/user/{id} and GET /system/user/ (the add form): the user, every enabled role and
 * post for the pickers, and the user's role and post ids.
 */
async function userForm(c: Context, id: number | undefined) {
  const run = c.get('run');
  const [user, roles, roleIds, posts] = await Promise.all([id ? userDetail(run, id) : undefined, listRoles(run), id ? ownRoles(run, id) : [], listPosts(run)]);
  const isSuper = run.knownSuper;
  // RuoYi's backend leaves the admin role out of the picker for everyone but an admin.
  const pickable = roles.filter((r) => isSuper || r.code !== 'superAdmin').map((r) => ruoyiRole(r));
  return ajax(c, { ...(user ? { data: ruoyiUser(user) } : {}), roles: pickable, roleIds, posts: posts.map(ruoyiPostOption), postIds: user?.postIds ?? [] });
}

/** The user page's filter (its list and its export): RuoYi's names and values in ours. */
export const userParams = (q: Record<string, string>) =>
  defined({ loginName: text(q.userName), phone: text(q.phonenumber), status: statusFilter(q.status), orgId: optionalId(q.deptId, 'deptId'), ...dateRangeOf(q) });

export const userRoutes = new Hono()
  .get('/system/user/list', ...read('sys:user:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(UserPageRequest, { pageNo, pageSize, params: userParams(q) });
    const page = await pageUsers(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiUser), page.total);
  })
  .get('/system/user/deptTree', ...read('sys:org:tree'), async (c) => ajaxData(c, treeSelect(await orgTree(c.get('run')))))
  .get('/system/user/profile', ...read(null), async (c) => {
    const [info, posts] = await Promise.all([loginUserInformation(c.get('deps'), c.get('run')), listPosts(c.get('run'))]);
    const mine = new Set(info.user.postIds);
    return ajax(c, { data: ruoyiUser(info.user), roleGroup: info.roles.map(ruoyiRoleKey).join(','), postGroup: posts.filter((p) => mine.has(p.id)).map((p) => p.name).join(',') });
  })
  .put('/system/user/profile', ...write(null, 'sysLoginUser', 'updateInfo'), async (c) => {
    const b = await body(c);
    const input = parsed(UpdateInfoRequest, defined({ nickName: text(b.nickName), email: textOrNull(b.email), phone: textOrNull(b.phonenumber) }));
    c.set('opParams', input);
    await updateInfo(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/user/profile/updatePwd', ...write(null, 'sysLoginUser', 'updatePassword'), async (c) => {
    const b = await body(c);
    const input = parsed(UpdatePasswordRequest, { oldPassword: b.oldPassword, newPassword: b.newPassword });
    await updatePassword(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .get('/system/user/authRole/:id{[0-9]+}', ...read('sys:user:ownRole'), async (c) => {
    const id = idOf(c.req.param('id'), 'userId');
    const run = c.get('run');
    const [user, roles, held] = await Promise.all([userDetail(run, id), listRoles(run), ownRoles(run, id)]);
    const mine = new Set(held);
    const isSuper = run.knownSuper;
    return ajax(c, { user: ruoyiUser(user), roles: roles.filter((r) => isSuper || r.code !== 'superAdmin').map((r) => ruoyiRole(r, mine)) });
  })
  .put('/system/user/authRole', ...write('sys:user:grantRole', 'sysUser', 'grantRole'), async (c) => {
    const input = { userId: idOf(c.req.query('userId'), 'userId'), roleIds: idListOf(c.req.query('roleIds') ?? '', 'roleIds') };
    c.set('opParams', input);
    await grantRoles(c.get('run'), input);
    return ajax(c);
  })
  .put('/system/user/resetPwd', ...write('sys:user:resetPassword', 'sysUser', 'resetPassword'), async (c) => {
    const b = await body(c);
    const input = parsed(ResetPasswordRequest, { id: idOf(b.userId, 'userId'), newPassword: b.password });
    c.set('opParams', { id: input.id, newPassword: '…' });
    await resetPassword(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/user/changeStatus', ...write('sys:user:changeStatus', 'sysUser', 'changeStatus'), async (c) => {
    const b = await body(c);
    const input = { id: idOf(b.userId, 'userId'), status: fromRuoyiStatus(b.status) };
    c.set('opParams', input);
    await changeUserStatus(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .get('/system/user/', ...read('sys:user:detail'), (c) => userForm(c, undefined))
  .get('/system/user/:id{[0-9]+}', ...read('sys:user:detail'), (c) => userForm(c, idOf(c.req.param('id'), 'userId')))
  .post('/system/user', ...write('sys:user:add', 'sysUser', 'add'), async (c) => {
    const b = await body(c);
    const roleIds = roleIdsOf(b.roleIds);
    const postIds = postIdsOf(b.postIds);
    const input = parsed(AddUserRequest, {
      loginName: b.userName,
      password: b.password,
      ...userFields(b),
      ...(b.status !== undefined && b.status !== '' ? { status: fromRuoyiStatus(b.status) } : {}),
      ...(roleIds?.length ? { roleIds } : {}),
      ...(postIds?.length ? { postIds } : {}),
    });
    c.set('opParams', { ...input, password: '…' });
    await addUser(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/user', ...write('sys:user:edit', 'sysUser', 'edit'), async (c) => {
    // RuoYi sends back the whole user it read, changed or not, and its role ids: only what
    // differs from the stored user goes into our edit, so the extra codes our edit asks for a
    // change of status (changeStatus) or roles (grantRole) are asked only when they change.
    const b = await body(c);
    const run = c.get('run');
    const id = idOf(b.userId, 'userId');
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the user and try again');
    const [current, held] = await Promise.all([userDetail(run, id), ownRoles(run, id)]);
    const changed = changedFrom(userFields(b), current);
    if (b.status !== undefined && b.status !== '') {
      const status = fromRuoyiStatus(b.status);
      if (status !== current.status) changed.status = status;
    }
    const roleIds = roleIdsOf(b.roleIds);
    if (roleIds && [...roleIds].sort().join() !== [...held].sort().join()) changed.roleIds = roleIds;
    const postIds = postIdsOf(b.postIds);
    if (postIds && [...postIds].sort().join() !== [...current.postIds].sort().join()) changed.postIds = postIds;
    const input = parsed(EditUserRequest, { id, version: b.version, ...changed });
    c.set('opParams', input);
    await editUser(c.get('deps'), run, input);
    return ajax(c);
  })
  .delete('/system/user/:ids{[0-9,]+}', ...write('sys:user:delete', 'sysUser', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'userIds');
    c.set('opParams', { ids });
    await deleteUsers(c.get('run'), ids);
    return ajax(c);
  });
