import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { badRequest } from '../../core/errors.ts';
import { describeZodError } from '../../http/errors.ts';
import { ok } from '../../http/respond.ts';
import { addMenu, deleteMenus, editMenu, MenuAddRequest, MenuEditRequest, menuTree } from '../../modules/menus/index.ts';
import { addOrg, deleteOrgs, editOrg, orgDetail, OrgAddRequest, OrgEditRequest, orgTree } from '../../modules/orgs/index.ts';
import { AddRoleRequest, addRole, changeRoleStatus, deleteRoles, pageRoles } from '../../modules/roles/index.ts';
import { AddUserRequest, addUser, changeUserStatus, deleteUsers, EditUserRequest, editUser, pageUsers, userDetail } from '../../modules/users/index.ts';
import { read, write } from './guard.ts';
import { toVbenDept, toVbenMenu, toVbenRole, toVbenUser } from './records.ts';

/** vben's status switch: 1 enabled, 0 disabled. */
const Status = z.union([z.literal(0), z.literal(1)]).transform((s) => (s === 1 ? ('enabled' as const) : ('disabled' as const)));
/** vben sends ids as strings (path segments, tree selects); ours are positive integers. */
const Id = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0 || String(v).trim() === '') {
    ctx.addIssue({ code: 'custom', message: 'must be an id' });
    return z.NEVER;
  }
  return n;
});
const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);

async function body<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const raw: unknown = await c.req.json().catch(() => {
    throw badRequest('body: must be JSON');
  });
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw badRequest(describeZodError(parsed.error));
  return parsed.data;
}

/**
 * The mapped input goes through the module's own request schema (the rules of /app: login-name
 * format, lengths, …), never a copy of them here; a refusal names vben's field where it has one.
 */
function ours<T extends z.ZodType>(schema: T, input: unknown, names: Record<string, string> = {}): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const msg = describeZodError(parsed.error);
  const field = msg.split(/[.:]/, 1)[0]!;
  throw badRequest(names[field] ? names[field] + msg.slice(field.length) : msg);
}

function pathId(c: Context): number {
  const id = c.req.param('id') ?? '';
  if (!/^[1-9][0-9]{0,15}$/.test(id) || !Number.isSafeInteger(Number(id))) throw badRequest('id: must be a positive integer');
  return Number(id);
}

/** `?page=&pageSize=`: vben's pager offers up to 200 a page; ours stops at PAGE_SIZE_MAX, so it is clamped, not refused. */
function paging(c: Context) {
  const page = Number(c.req.query('page') ?? 1);
  const size = Number(c.req.query('pageSize') ?? 20);
  if (!Number.isInteger(page) || page < 1) throw badRequest('page: must be an integer of at least 1');
  if (!Number.isInteger(size) || size < 1) throw badRequest('pageSize: must be an integer of at least 1');
  return { pageNo: page, pageSize: Math.min(size, c.get('deps').config.PAGE_SIZE_MAX), sortOrder: 'desc' as const, searchCount: true };
}

/** `status=0|1` filters; anything else (vben sends `status=` empty) means all. */
const statusFilter = (v: string | undefined) => (v === '1' ? ('enabled' as const) : v === '0' ? ('disabled' as const) : undefined);
const dateFilter = (v: string | undefined, end: boolean) =>
  v && /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T${end ? '23:59:59.999' : '00:00:00.000'}Z` : undefined;

const UserWrite = z.strictObject({
  name: z.string().trim().min(1, 'is required').max(64, 'must be at most 64 characters').optional(),
  deptId: z.union([Id, z.literal(''), z.null()]).optional(),
  status: Status.optional(),
  remark: text(255).nullable().optional(),
});

const DeptWrite = z.strictObject({
  name: text(64).min(1, 'is required').optional(),
  pid: z.union([Id, z.literal(''), z.null()]).optional(),
  status: Status.optional(),
  remark: text(255).nullable().optional(),
});

/**
 * vben's role form sets name, status, remark and the menu grants in one call. Creating is mapped:
 * our addRole takes the menus into its own batch (one write, grantMenu's rules). Editing a role's
 * name, remark or menus would be two of our writes (edit, grantMenu) that could half-succeed:
 * refused, with where to go instead; the status switch is mapped.
 */
const ROLE_EDIT = "Editing a role's name, remark or menus here is not supported: do it through /app/sysRole (edit, grantMenu); the status switch, create and delete work here";
const RoleCreate = z.looseObject({
  name: text(64).min(1, 'is required'),
  status: Status.optional(),
  remark: text(255).nullable().optional(),
  permissions: z.array(Id).max(1000, 'at most 1000 menus').optional(),
});

const USER_NAMES = { loginName: 'name', orgId: 'deptId' };
const DEPT_NAMES = { parentId: 'pid' };
const MENU_NAMES = { parentId: 'pid', title: 'meta.title', icon: 'meta.icon', sort: 'meta.order', permission: 'authCode', hidden: 'meta.hideInMenu', keepAlive: 'meta.keepAlive' };

/** vben's menu types onto ours; `embedded` and `link` (iframe and external URL) have no counterpart. */
const MENU_TYPE = { catalog: 'directory', menu: 'menu', button: 'button' } as const;
const MenuWrite = z.looseObject({
  type: z.string().optional(),
  name: z.string().nullish(),
  pid: z.union([Id, z.literal(''), z.null()]).optional(),
  path: z.string().nullish(),
  component: z.string().nullish(),
  authCode: z.string().nullish(),
  status: Status.optional(),
  meta: z.looseObject({ title: z.string().optional(), icon: z.string().nullish(), order: z.number().optional(), keepAlive: z.boolean().optional(), hideInMenu: z.boolean().optional() }).optional(),
});

/** The fields vben's menu form sends, as our menu fields; only those given (edit leaves the rest). */
function menuFields(v: z.infer<typeof MenuWrite>) {
  const type = v.type === undefined ? undefined : MENU_TYPE[v.type as keyof typeof MENU_TYPE];
  if (v.type !== undefined && !type) throw badRequest(`type: ${v.type} menus (iframes and external links) are not supported by this service`);
  const m = v.meta ?? {};
  const out: Record<string, unknown> = {
    type,
    name: v.name === undefined ? undefined : v.name || null,
    parentId: v.pid === undefined ? undefined : (orgOf(v.pid) ?? 0),
    path: v.path === undefined ? undefined : v.path || null,
    component: v.component === undefined ? undefined : v.component || null,
    permission: v.authCode === undefined ? undefined : v.authCode || null,
    status: v.status,
    title: m.title,
    icon: m.icon === undefined ? undefined : m.icon || null,
    sort: m.order,
    keepAlive: m.keepAlive,
    hidden: m.hideInMenu,
  };
  return Object.fromEntries(Object.entries(out).filter(([, x]) => x !== undefined));
}

const orgOf = (deptId: number | '' | null | undefined) => (deptId === undefined ? undefined : deptId === '' || deptId === null || deptId === 0 ? null : deptId);

export function systemRoutes() {
  return (
    new Hono()
      // ---- users: name ↔ loginName (nickName on create), deptId ↔ orgId
      .get('/system/user/list', ...read('sys:user:page'), async (c) => {
        const q = c.req.query();
        const deptId = q.deptId ? Id.safeParse(q.deptId) : undefined;
        if (deptId && !deptId.success) throw badRequest('deptId: must be an id');
        const params = {
          loginName: q.name || undefined,
          status: statusFilter(q.status),
          orgId: deptId?.data || undefined,
          createdFrom: dateFilter(q.startTime, false),
          createdTo: dateFilter(q.endTime, true),
        };
        const result = await pageUsers(c.get('deps'), c.get('run'), { ...paging(c), params });
        return ok(c, { items: result.records.map(toVbenUser), total: result.total });
      })
      .post('/system/user', ...write('sys:user:add', 'sysUser', 'add'), async (c) => {
        const v = await body(c, UserWrite);
        if (!v.name) throw badRequest('name: is required');
        const orgId = orgOf(v.deptId);
        const input = ours(AddUserRequest, { loginName: v.name, nickName: v.name, status: v.status, remark: v.remark, ...(orgId !== undefined ? { orgId } : {}) }, USER_NAMES);
        const user = await addUser(c.get('deps'), c.get('run'), input);
        return ok(c, toVbenUser(user));
      })
      .put('/system/user/:id', ...write('sys:user:edit', 'sysUser', 'edit'), async (c) => {
        const id = pathId(c);
        const v = await body(c, UserWrite);
        const deps = c.get('deps');
        const run = c.get('run');
        const fields = Object.keys(v);
        // The list's switch sends only {status}: that is changeStatus, with its own code.
        if (fields.length === 1 && v.status) {
          c.set('opAction', { module: 'sysUser', action: 'changeStatus' });
          await changeUserStatus(deps, run, { id, status: v.status });
          return ok(c, null);
        }
        // vben sends no version and its whole form: the edit applies to the version read just now
        // (last writer wins), with only the fields that differ from it, so an edit in place is this
        // read and one batch; a rename or a move also reads what its checks need.
        const current = await userDetail(run, id);
        const changed = <T>(next: T | undefined, now: T) => (next === undefined || next === now ? undefined : next);
        const orgId = changed(orgOf(v.deptId), current.orgId);
        const edit = { loginName: changed(v.name, current.loginName), status: changed(v.status, current.status), remark: changed(v.remark, current.remark) };
        if (orgId === undefined && Object.values(edit).every((x) => x === undefined)) return ok(c, null);
        await editUser(deps, run, ours(EditUserRequest, { id, version: current.version, ...edit, ...(orgId !== undefined ? { orgId } : {}) }, USER_NAMES));
        return ok(c, null);
      })
      .delete('/system/user/:id', ...write('sys:user:delete', 'sysUser', 'delete'), async (c) => {
        await deleteUsers(c.get('run'), [pathId(c)]);
        return ok(c, null);
      })
      // ---- roles
      .get('/system/role/list', ...read('sys:role:page'), async (c) => {
        const q = c.req.query();
        const result = await pageRoles(c.get('deps'), c.get('run'), { ...paging(c), params: { name: q.name || undefined, status: statusFilter(q.status) } }, { menuIds: true });
        return ok(c, { items: result.records.map(toVbenRole), total: result.total });
      })
      .post('/system/role', ...write('sys:role:add', 'sysRole', 'add'), async (c) => {
        const v = await body(c, RoleCreate);
        // vben's roles have no code; ours need a unique one: made up, and shown in our own console.
        const code = `vben_${c.get('deps').ids.uuid().replace(/-/g, '').slice(0, 12)}`;
        const input = ours(AddRoleRequest, { name: v.name, code, status: v.status, remark: v.remark ?? undefined });
        const menuIds = [...new Set(v.permissions ?? [])];
        const role = await addRole(c.get('deps'), c.get('run'), input, { menuIds });
        return ok(c, toVbenRole({ ...role, menuIds }));
      })
      .put('/system/role/:id', ...write('sys:role:changeStatus', 'sysRole', 'changeStatus'), async (c) => {
        const id = pathId(c);
        const v = await body(c, z.looseObject({ status: Status.optional() }));
        if (!v.status || Object.keys(v).length !== 1) throw badRequest(ROLE_EDIT);
        await changeRoleStatus(c.get('deps'), c.get('run'), { id, status: v.status });
        return ok(c, null);
      })
      .delete('/system/role/:id', ...write('sys:role:delete', 'sysRole', 'delete'), async (c) => {
        await deleteRoles(c.get('run'), [pathId(c)]);
        return ok(c, null);
      })
      // ---- menus (read side: the tree, and the form's uniqueness checks)
      .get('/system/menu/list', ...read('sys:menu:tree'), async (c) => ok(c, (await menuTree(c.get('run'))).map(toVbenMenu)))
      .get('/system/menu/name-exists', ...read('sys:menu:tree'), async (c) => {
        const { name = '', id } = c.req.query();
        const rows = flat(await menuTree(c.get('run')));
        const wanted = name.trim().toLowerCase();
        return ok(c, rows.some((m) => (m.name ?? `Menu${m.id}`).toLowerCase() === wanted && String(m.id) !== id));
      })
      .get('/system/menu/path-exists', ...read('sys:menu:tree'), async (c) => {
        const { path = '', id } = c.req.query();
        const rows = flat(await menuTree(c.get('run')));
        return ok(c, rows.some((m) => m.path === path.trim() && String(m.id) !== id));
      })
      .post('/system/menu', ...write('sys:menu:add', 'sysMenu', 'add'), async (c) => {
        const input = ours(MenuAddRequest, menuFields(await body(c, MenuWrite)), MENU_NAMES);
        return ok(c, toVbenMenu({ ...(await addMenu(c.get('deps'), c.get('run'), input)), children: [] }));
      })
      .put('/system/menu/:id', ...write('sys:menu:edit', 'sysMenu', 'edit'), async (c) => {
        const id = pathId(c);
        const fields = menuFields(await body(c, MenuWrite));
        // No version from vben: the one editMenu reads is the one its write requires (a change made
        // in between is a 409, never overwritten); an unchanged permission code is not "set" (only
        // a super admin may set one), as editMenu compares with the row it read.
        const input = ours(MenuEditRequest.omit({ version: true }), { id, ...fields }, MENU_NAMES);
        await editMenu(c.get('deps'), c.get('run'), { ...input, version: 'current' });
        return ok(c, null);
      })
      .delete('/system/menu/:id', ...write('sys:menu:delete', 'sysMenu', 'delete'), async (c) => {
        await deleteMenus(c.get('run'), [pathId(c)]);
        return ok(c, null);
      })
      // ---- departments: our organisations (pid ↔ parentId)
      .get('/system/dept/list', ...read('sys:org:tree'), async (c) => ok(c, (await orgTree(c.get('run'))).map(toVbenDept)))
      .post('/system/dept', ...write('sys:org:add', 'sysOrg', 'add'), async (c) => {
        const v = await body(c, DeptWrite);
        if (!v.name) throw badRequest('name: is required');
        const deps = c.get('deps');
        // vben has no organisation code; ours is unique, so the dialect makes one up.
        const code = `d${deps.ids.uuid().replace(/-/g, '').slice(0, 16)}`;
        const input = ours(OrgAddRequest, { name: v.name, code, parentId: orgOf(v.pid) ?? 0, status: v.status, remark: v.remark ?? undefined }, DEPT_NAMES);
        const org = await addOrg(deps, c.get('run'), input);
        return ok(c, toVbenDept({ ...org, children: [] }));
      })
      .put('/system/dept/:id', ...write('sys:org:edit', 'sysOrg', 'edit'), async (c) => {
        const id = pathId(c);
        const v = await body(c, DeptWrite);
        const run = c.get('run');
        // No version from vben: the one read just now (last writer wins).
        const current = await orgDetail(run, id);
        // vben's form always sends pid: passed on only when it moves the organisation (a move
        // reads the tree for its checks; an edit in place stays one batch after this read).
        const pid = v.pid === undefined ? undefined : (orgOf(v.pid) ?? 0);
        const parentId = pid === current.parentId ? undefined : pid;
        await editOrg(c.get('deps'), run, ours(OrgEditRequest, { id, version: current.version, name: v.name, parentId, status: v.status, remark: v.remark ?? undefined }, DEPT_NAMES));
        return ok(c, null);
      })
      .delete('/system/dept/:id', ...write('sys:org:delete', 'sysOrg', 'delete'), async (c) => {
        await deleteOrgs(c.get('run'), [pathId(c)]);
        return ok(c, null);
      })
  );
}

function flat<T extends { children: T[] }>(tree: T[]): T[] {
  return tree.flatMap((n) => [n, ...flat(n.children)]);
}

