import { describe, expect, test } from 'bun:test';
import type { PermissionCode } from '../src/core/permissions.ts';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { USER_PASSWORD, menuIdsFor, snapshot, userWithCodes } from './support/rbac.ts';
import { expectGuarded, type GuardedOp } from './support/scenario.ts';

let t: AnyTestApp;
let admin: string;
let n = 0;
const uniq = (p = 'role') => `${p}${++n}`;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

async function addRole(body: Record<string, unknown> = {}) {
  const code = uniq();
  return t.call('POST', '/app/sysRole/add', { token: admin, body: { name: `Name ${code}`, code, ...body } });
}

async function newRoleId(body: Record<string, unknown> = {}) {
  const r = await addRole(body);
  expect(r.status).toBe(200);
  return r.data.id as number;
}

const menusOf = async (roleId: number) =>
  (await t.rows<{ menu_id: number }>('SELECT menu_id FROM role_menu WHERE role_id = ? ORDER BY menu_id', roleId)).map((r) => r.menu_id);
const roleRow = (id: number) => t.row('SELECT * FROM roles WHERE id = ?', id);

const OPS: (GuardedOp & { code: PermissionCode })[] = [
  { code: 'sys:role:page', method: 'POST', path: '/app/sysRole/page', request: async () => ({ body: {} }) },
  { code: 'sys:role:list', method: 'GET', path: '/app/sysRole/list', request: async () => ({}) },
  { code: 'sys:role:detail', method: 'GET', path: '/app/sysRole/detail', request: async () => ({ query: 'id=1' }) },
  { code: 'sys:role:add', method: 'POST', path: '/app/sysRole/add', request: async () => ({ body: { name: 'A', code: uniq('auth') } }) },
  { code: 'sys:role:edit', method: 'POST', path: '/app/sysRole/edit', request: async () => ({ body: { id: await newRoleId(), version: 1, name: 'B' } }) },
  { code: 'sys:role:delete', method: 'POST', path: '/app/sysRole/delete', request: async () => ({ body: { ids: [await newRoleId()] } }) },
  {
    code: 'sys:role:changeStatus',
    method: 'POST',
    path: '/app/sysRole/changeStatus',
    request: async () => ({ body: { id: await newRoleId(), status: 'disabled' } }),
  },
  // A menu the holder holds itself: a non-super-admin may only grant those (see the escalation tests).
  {
    code: 'sys:role:grantMenu',
    method: 'POST',
    path: '/app/sysRole/grantMenu',
    request: async () => ({ body: { roleId: await newRoleId(), menuIds: await menuIdsFor(t, ['sys:role:grantMenu']) } }),
  },
  { code: 'sys:role:ownMenu', method: 'GET', path: '/app/sysRole/ownMenu', request: async () => ({ query: 'id=1' }) },
];

function suite() {
  describe('auth table: no token 401, without the code 403, with the code 200', () => {
    for (const op of OPS) {
      test(`${op.method} ${op.path} [${op.code}]`, async () => {
        const noCode = await userWithCodes(t, OPS.filter((o) => o.code !== op.code).map((o) => o.code));
        const holder = await userWithCodes(t, [op.code]);
        // The request builder may add a role itself (before the snapshot); the refused request adds nothing more.
        await expectGuarded(t, op, { refused: noCode.token, granted: holder.token }, ['roles', 'role_menu', 'user_role']);
      });
    }
  });

  describe('add, detail, list, page', () => {
    test('add returns the role; codes are unique case-insensitively', async () => {
      const r = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: ' Auditors ', code: 'auditors', sort: 3, remark: 'read only' } });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ name: 'Auditors', code: 'auditors', sort: 3, status: 'enabled', remark: 'read only', version: 1 });
      const before = await snapshot(t, 'roles');
      for (const code of ['auditors', 'AUDITORS', 'SuperAdmin']) {
        const dup = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'x', code } });
        expect(dup.status).toBe(409);
        expect(dup.json.msg).toContain('code');
      }
      expect(await snapshot(t, 'roles')).toBe(before);
      const detail = await t.call('GET', `/app/sysRole/detail?id=${r.data.id}`, { token: admin });
      expect(detail.data).toEqual(r.data);
      expect((await t.call('GET', '/app/sysRole/detail?id=424242', { token: admin })).status).toBe(404);
    });

    test('bad bodies are 400 and write nothing', async () => {
      const before = await snapshot(t, 'roles');
      for (const body of [
        { name: 'x', code: '1abc' },
        { name: 'x', code: 'a' },
        { name: 'x', code: 'has space' },
        { name: 'x', code: "x'; DROP TABLE roles; --" },
        { name: 'x', code: 'a'.repeat(65) },
        { name: '', code: 'okcode' },
        { code: 'okcode' },
        { name: 'x', code: 'okcode', sort: 1.5 },
        { name: 'x', code: 'okcode', sort: '1' },
        { name: 'x', code: 'okcode', status: 'on' },
        { name: 'x', code: 'okcode', id: 5 },
        { name: 'x', code: 'okcode', version: 2 },
        { name: 'x', code: 'okcode', createdAt: '2020-01-01T00:00:00.000Z' },
      ]) {
        const r = await t.call('POST', '/app/sysRole/add', { token: admin, body });
        expect(r.status).toBe(400);
      }
      expect(await snapshot(t, 'roles')).toBe(before);
    });

    test('list holds every enabled role only, by sort', async () => {
      const off = await newRoleId({ status: 'disabled' });
      const late = await newRoleId({ sort: 999 });
      const r = await t.call('GET', '/app/sysRole/list', { token: admin });
      expect(r.status).toBe(200);
      const ids = r.data.map((x: { id: number }) => x.id);
      expect(ids).not.toContain(off);
      expect(ids.at(-1)).toBe(late);
      expect(r.data.every((x: { status: string }) => x.status === 'enabled')).toBe(true);
    });

    test('page filters by name, code, status; % and _ literal; sort whitelist', async () => {
      await newRoleId({ name: '50% off', code: 'pct_role' });
      await newRoleId({ name: 'fifty', code: 'pctXrole', status: 'disabled' });
      const page = (body: unknown) => t.call('POST', '/app/sysRole/page', { token: admin, body });
      const codes = async (params: unknown) => {
        const r = await page({ params, pageSize: 100, sortField: 'code', sortOrder: 'asc' });
        expect(r.status).toBe(200);
        return r.data.records.map((x: { code: string }) => x.code);
      };
      expect(await codes({ code: 'pct_' })).toEqual(['pct_role']);
      expect(await codes({ code: 'pct' })).toEqual(['pctXrole', 'pct_role']);
      expect(await codes({ name: '%' })).toEqual(['pct_role']);
      expect(await codes({ code: 'pct', status: 'disabled' })).toEqual(['pctXrole']);
      expect(await codes({ name: "' OR 1=1 --" })).toEqual([]);
      const all = await page({});
      expect(all.data.total).toBe(await t.count('roles'));
      for (const sortField of ['id', 'name', 'code', 'sort', 'createdAt', 'updatedAt']) expect((await page({ sortField })).status).toBe(200);
      for (const body of [
        { sortField: 'status; DROP TABLE roles' },
        { sortField: 'remark' },
        { params: { loginName: 'x' } },
        { params: { status: 1 } },
        { params: { name: '' } },
        { pageSize: 1000 },
      ]) {
        expect((await page(body)).status).toBe(400);
      }
      expect(await t.count('roles')).toBeGreaterThan(1);
    });
  });

  describe('edit', () => {
    const edit = (body: unknown) => t.call('POST', '/app/sysRole/edit', { token: admin, body });

    test('partial update with version; stale is 409 and changes nothing', async () => {
      const id = await newRoleId({ name: 'Before', sort: 5 });
      const r = await edit({ id, version: 1, name: 'After' });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ name: 'After', sort: 5, version: 2 });
      const before = await snapshot(t, 'roles');
      const stale = await edit({ id, version: 1, name: 'Lost update' });
      expect(stale.status).toBe(409);
      expect(await snapshot(t, 'roles')).toBe(before);
      expect((await edit({ id: 424242, version: 1, name: 'x' })).status).toBe(404);
    });

    test('code conflicts are 409; read-only fields 400', async () => {
      await newRoleId({ code: 'clash_me' });
      const id = await newRoleId();
      expect((await edit({ id, version: 1, code: 'CLASH_ME' })).status).toBe(409);
      for (const body of [
        { id, version: 1, createdAt: 'x' },
        { id, version: 1, updatedAt: 'x' },
        { id, name: 'no version' },
        { id: 'x', version: 1 },
        { id, version: 1, code: 'bad code' },
      ]) {
        expect((await edit(body)).status).toBe(400);
      }
    });

    test("the superAdmin role's code cannot change; its name can", async () => {
      const v = (await roleRow(1))!.version;
      const r = await edit({ id: 1, version: v, code: 'root' });
      expect(r.status).toBe(400);
      expect(r.json.msg).toContain('code');
      expect((await roleRow(1))!.code).toBe('superAdmin');
      const same = await edit({ id: 1, version: v, code: 'superAdmin', name: 'Root' });
      expect(same.status).toBe(200);
      expect(await roleRow(1)).toMatchObject({ code: 'superAdmin', name: 'Root' });
    });
  });

  describe('delete', () => {
    const del = (body: unknown) => t.call('POST', '/app/sysRole/delete', { token: admin, body });

    test('deletes roles and their menu grants', async () => {
      const a = await newRoleId();
      const b = await newRoleId();
      await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: a, menuIds: [3, 4] } });
      expect((await del({ ids: [a, b, 424242] })).status).toBe(200);
      expect(await roleRow(a)).toBeNull();
      expect(await roleRow(b)).toBeNull();
      expect(await menusOf(a)).toEqual([]);
    });

    test('refused with 400 while a user holds the role; the superAdmin role never goes', async () => {
      const held = await newRoleId();
      const free = await newRoleId();
      await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: uniq('holder'), password: USER_PASSWORD, roleIds: [held] } });
      const before = await snapshot(t, 'roles', 'role_menu', 'user_role');
      const r = await del({ ids: [free, held] });
      expect(r.status).toBe(400);
      expect(r.json.msg).toContain(`role ${held} is still granted`);
      const sa = await del({ ids: [1] });
      expect(sa.status).toBe(400);
      expect(sa.json.msg).toContain('superAdmin');
      expect(await snapshot(t, 'roles', 'role_menu', 'user_role')).toBe(before);
    });

    test('a grant racing the delete cannot be lost: the in-use check runs inside the write', async () => {
      const role = await newRoleId();
      const user = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: uniq('racer'), password: USER_PASSWORD } });
      const atomic = t.deps.atomic;
      // The delete's early check passes; the grant lands before the delete's write runs.
      t.deps.atomic = async (q) => {
        t.deps.atomic = atomic;
        await t.exec('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)', user.data.id, role);
        return atomic(q);
      };
      const r = await del({ ids: [role] });
      t.deps.atomic = atomic;
      expect(r.status).toBe(400);
      // The guard refused the batch; the early check, run after it to explain the refusal (edge,
      // issue 14: no read before the write), names the role.
      expect(r.json.msg).toBe(`ids: role ${role} is still granted to users; revoke it first`);
      expect(await roleRow(role)).not.toBeNull();
      expect(await t.rows('SELECT role_id FROM user_role WHERE user_id = ?', user.data.id)).toEqual([{ role_id: role }]);
    });

    test('bad ids', async () => {
      for (const body of [{ ids: [] }, { ids: ['1'] }, { ids: [-1] }, { ids: '1 OR 1=1' }, { ids: Array.from({ length: 101 }, (_, i) => i + 1) }, { ids: [1e16] }]) {
        expect((await del(body)).status).toBe(400);
      }
    });
  });

  describe('grantMenu and ownMenu', () => {
    const grant = (body: unknown) => t.call('POST', '/app/sysRole/grantMenu', { token: admin, body });

    test('replaces the set; ownMenu reads it back', async () => {
      const id = await newRoleId();
      expect((await grant({ roleId: id, menuIds: [5, 3, 3, 4] })).status).toBe(200);
      expect(await menusOf(id)).toEqual([3, 4, 5]);
      expect((await grant({ roleId: id, menuIds: [6] })).status).toBe(200);
      expect((await t.call('GET', `/app/sysRole/ownMenu?id=${id}`, { token: admin })).data).toEqual([6]);
      expect((await grant({ roleId: id, menuIds: [] })).status).toBe(200);
      expect(await menusOf(id)).toEqual([]);
    });

    test('unknown menu ids are 400 and the old set stays', async () => {
      const id = await newRoleId();
      await grant({ roleId: id, menuIds: [3] });
      const r = await grant({ roleId: id, menuIds: [4, 99999] });
      expect(r.status).toBe(400);
      expect(r.json.msg).toBe('menuIds: unknown menu id 99999');
      expect(await menusOf(id)).toEqual([3]);
      expect((await grant({ roleId: 424242, menuIds: [3] })).status).toBe(404);
      expect((await t.call('GET', '/app/sysRole/ownMenu?id=424242', { token: admin })).status).toBe(404);
      for (const body of [
        { roleId: id, menuIds: ['3'] },
        { roleId: id, menuIds: [0] },
        { roleId: id, menuIds: Array.from({ length: 1001 }, (_, i) => i + 1) },
        { roleId: id },
        { roleId: '1 OR 1=1', menuIds: [] },
        { roleId: id, menuIds: [], extra: 1 },
      ]) {
        expect((await grant(body)).status).toBe(400);
      }
      expect(await menusOf(id)).toEqual([3]);
    });
  });

  describe('a permission change applies on the very next request, without re-login', () => {
    const canPage = async (token: string) => (await t.call('POST', '/app/sysUser/page', { token, body: {} })).status;

    test('menu grant and revoke', async () => {
      const u = await userWithCodes(t, []);
      expect(await canPage(u.token)).toBe(403);
      await grant(u.roleId, ['sys:user:page']);
      expect(await canPage(u.token)).toBe(200);
      await grant(u.roleId, []);
      expect(await canPage(u.token)).toBe(403);
    });

    test('role revoked from the user, and granted back', async () => {
      const u = await userWithCodes(t, ['sys:user:page']);
      expect(await canPage(u.token)).toBe(200);
      expect((await t.call('POST', '/app/sysUser/grantRole', { token: admin, body: { userId: u.userId, roleIds: [] } })).status).toBe(200);
      expect(await canPage(u.token)).toBe(403);
      expect((await t.call('POST', '/app/sysUser/grantRole', { token: admin, body: { userId: u.userId, roleIds: [u.roleId] } })).status).toBe(200);
      expect(await canPage(u.token)).toBe(200);
    });

    test('role disabled, and enabled again', async () => {
      const u = await userWithCodes(t, ['sys:user:page']);
      expect(await canPage(u.token)).toBe(200);
      expect((await t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'disabled' } })).status).toBe(200);
      expect((await roleRow(u.roleId))!.status).toBe('disabled');
      expect(await canPage(u.token)).toBe(403);
      const info = await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: u.token });
      expect(info.data.permissions).toEqual([]);
      expect((await t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'enabled' } })).status).toBe(200);
      expect(await canPage(u.token)).toBe(200);
    });

    test('user disabled: the old token stops at once', async () => {
      const u = await userWithCodes(t, ['sys:user:page']);
      expect(await canPage(u.token)).toBe(200);
      expect((await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body: { id: u.userId, status: 'disabled' } })).status).toBe(200);
      expect(await canPage(u.token)).toBe(401);
    });

    test('superAdmin role granted and revoked', async () => {
      const u = await userWithCodes(t, []);
      expect(await canPage(u.token)).toBe(403);
      await t.call('POST', '/app/sysUser/grantRole', { token: admin, body: { userId: u.userId, roleIds: [u.roleId, 1] } });
      expect(await canPage(u.token)).toBe(200);
      await t.call('POST', '/app/sysUser/grantRole', { token: admin, body: { userId: u.userId, roleIds: [u.roleId] } });
      expect(await canPage(u.token)).toBe(403);
    });

    async function grant(roleId: number, codes: PermissionCode[]) {
      const r = await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId, menuIds: await menuIdsFor(t, codes) } });
      expect(r.status).toBe(200);
    }
  });

  describe('op log', () => {
    test('role writes are recorded, refused ones too', async () => {
      const before = await t.count('op_log');
      await addRole({ code: 'logged_role' });
      await addRole({ code: 'logged_role' });
      await t.call('POST', '/app/sysRole/delete', { token: admin, body: { ids: [1] } });
      await t.call('GET', '/app/sysRole/list', { token: admin });
      const rows = await t.rows('SELECT module, action, status FROM op_log ORDER BY id DESC LIMIT ?', (await t.count('op_log')) - before);
      expect(rows).toEqual([
        { module: 'sysRole', action: 'delete', status: 400 },
        { module: 'sysRole', action: 'add', status: 409 },
        { module: 'sysRole', action: 'add', status: 200 },
      ]);
    });
  });
}
