import { beforeAll, describe, expect, test } from 'bun:test';
import type { PermissionCode } from '../src/core/permissions.ts';
import { ADMIN_PASSWORD, isOpLogRecord, perRuntime, type AnyTestApp } from './support/app.ts';
import { USER_PASSWORD, snapshot, userWithCodes, withWriteBarrier } from './support/rbac.ts';
import { expectGuarded, type GuardedOp } from './support/scenario.ts';

let t: AnyTestApp;
let admin: string;
let n = 0;
const uniq = (p = 'u') => `${p}${++n}`;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

async function addUser(body: Record<string, unknown> = {}, token = admin) {
  return t.call('POST', '/app/sysUser/add', { token, body: { loginName: uniq('target'), password: USER_PASSWORD, ...body } });
}

async function newUserId(body: Record<string, unknown> = {}) {
  const r = await addUser(body);
  expect(r.status).toBe(200);
  return r.data.id as number;
}

function userRow(id: number) {
  return t.row('SELECT * FROM users WHERE id = ?', id);
}

async function roleIdsOf(userId: number) {
  return (await t.rows<{ role_id: number }>('SELECT role_id FROM user_role WHERE user_id = ? ORDER BY role_id', userId)).map((r) => r.role_id);
}

const OPS: (GuardedOp & { code: PermissionCode })[] = [
  { code: 'sys:user:page', method: 'POST', path: '/app/sysUser/page', request: async () => ({ body: {} }) },
  { code: 'sys:user:detail', method: 'GET', path: '/app/sysUser/detail', request: async () => ({ query: 'id=1' }) },
  { code: 'sys:user:add', method: 'POST', path: '/app/sysUser/add', request: async () => ({ body: { loginName: uniq('auth'), password: USER_PASSWORD } }) },
  {
    code: 'sys:user:edit',
    method: 'POST',
    path: '/app/sysUser/edit',
    request: async () => ({ body: { id: await newUserId(), version: 1, nickName: 'Edited' } }),
  },
  { code: 'sys:user:delete', method: 'POST', path: '/app/sysUser/delete', request: async () => ({ body: { ids: [await newUserId()] } }) },
  {
    code: 'sys:user:changeStatus',
    method: 'POST',
    path: '/app/sysUser/changeStatus',
    request: async () => ({ body: { id: await newUserId(), status: 'disabled' } }),
  },
  {
    code: 'sys:user:resetPassword',
    method: 'POST',
    path: '/app/sysUser/resetPassword',
    request: async () => ({ body: { id: await newUserId(), newPassword: 'Another-Passw0rd-7' } }),
  },
  {
    code: 'sys:user:grantRole',
    method: 'POST',
    path: '/app/sysUser/grantRole',
    request: async () => ({ body: { userId: await newUserId(), roleIds: [] } }),
  },
  { code: 'sys:user:ownRole', method: 'GET', path: '/app/sysUser/ownRole', request: async () => ({ query: 'id=1' }) },
];

function suite() {
  describe('auth table: no token 401, without the code 403, with the code 200', () => {
    for (const op of OPS) {
      test(`${op.method} ${op.path} [${op.code}]`, async () => {
        const noCode = await userWithCodes(t, OPS.filter((o) => o.code !== op.code).map((o) => o.code));
        const holder = await userWithCodes(t, [op.code]);
        await expectGuarded(t, op, { refused: noCode.token, granted: holder.token }, ['users', 'user_role', 'sessions']);
      });
    }
  });

  describe('add', () => {
    test('creates the user with its roles and never returns the hash', async () => {
      const role = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Editors', code: uniq('editors') } });
      const r = await addUser({ loginName: '  Alice_1  ', nickName: ' Alice ', email: ' a@example.com ', phone: '+1 555', roleIds: [role.data.id, role.data.id] });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ loginName: 'Alice_1', nickName: 'Alice', email: 'a@example.com', status: 'enabled', version: 1 });
      expect(JSON.stringify(r.json)).not.toMatch(/argon2|password/i);
      expect(await roleIdsOf(r.data.id)).toEqual([role.data.id]);
      expect(String((await userRow(r.data.id))!.password_hash)).toStartWith('$argon2id$');
      expect(await t.login('alice_1', USER_PASSWORD)).toBeString();
    });

    test('login names are unique case-insensitively (409, nothing written)', async () => {
      await newUserId({ loginName: 'CaseName' });
      const before = await snapshot(t, 'users', 'user_role');
      const r = await addUser({ loginName: 'casename' });
      expect(r.status).toBe(409);
      expect(r.json.msg).toContain('loginName');
      expect(await snapshot(t, 'users', 'user_role')).toBe(before);
    });

    test('password policy: length, equal to login name, common', async () => {
      for (const [password, rule] of [
        ['short1!', 'at least 8'],
        ['x'.repeat(129), 'at most 128'],
        ['PolicyUser1', 'login name'],
        ['password123', 'too common'],
        [' '.repeat(10), 'visible character'],
        ['\t'.repeat(9), 'visible character'],
        ['\u200b\u200c\u200d\u2060\ufeff\u200b\u200b\u200b', 'visible character'],
        ['\u00a0\u3000 \t\u2003\u200b\u00a0\u3000', 'visible character'],
      ] as const) {
        const users = await t.count('users');
        const r = await addUser({ loginName: 'policyuser1', password });
        expect(r.status).toBe(400);
        expect(r.json.msg).toContain('password');
        expect(r.json.msg).toContain(rule);
        expect(await t.count('users')).toBe(users);
      }
    });

    test('unknown or read-only fields are refused (no mass assignment)', async () => {
      for (const extra of [{ id: 999 }, { passwordHash: 'x' }, { createdAt: '2020-01-01T00:00:00.000Z' }, { version: 5 }, { lastLoginAt: null }, { isAdmin: true }]) {
        const users = await t.count('users');
        const r = await addUser(extra);
        expect(r.status).toBe(400);
        expect(r.json.msg).toContain('unknown field');
        expect(await t.count('users')).toBe(users);
      }
    });

    test('bad values are 400 naming the field', async () => {
      for (const [body, field] of [
        [{ loginName: 'a' }, 'loginName'],
        [{ loginName: "x' OR 1=1 --" }, 'loginName'],
        [{ email: 'not-an-email' }, 'email'],
        [{ phone: 'abc' }, 'phone'],
        [{ status: 'active' }, 'status'],
        [{ roleIds: ['1'] }, 'roleIds'],
        [{ roleIds: [-1] }, 'roleIds'],
        [{ roleIds: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'roleIds'],
      ] as const) {
        const r = await addUser(body as Record<string, unknown>);
        expect(r.status).toBe(400);
        expect(r.json.msg).toContain(field);
      }
      const noBody = await t.call('POST', '/app/sysUser/add', { token: admin });
      expect(noBody.status).toBe(400);
      const notJson = await t.call('POST', '/app/sysUser/add', { token: admin, body: '{"loginName":', headers: { 'content-type': 'application/json' } });
      expect(notJson.status).toBe(400);
    });

    test('a nonexistent roleId fails the whole write: no user is left behind', async () => {
      const atomic = t.deps.atomic;
      let batches = 0;
      t.deps.atomic = (q) => (isOpLogRecord(q) || batches++, atomic(q));
      try {
        const before = await snapshot(t, 'users', 'user_role');
        const r = await addUser({ loginName: 'halfway', roleIds: [1, 987654] });
        expect(r.status).toBe(400);
        expect(r.json.msg).toBe('roleIds: unknown role id 987654');
        // The user insert ran inside the batch and was rolled back with it.
        expect(batches).toBe(1);
        expect(await snapshot(t, 'users', 'user_role')).toBe(before);
      } finally {
        t.deps.atomic = atomic;
      }
    });

    test('two parallel adds of one name: one 200, one 409, never 500', async () => {
      const atomic = t.deps.atomic;
      // A barrier in front of the write: both requests pass the early name check before either
      // writes, so the unique index (mapped to 409) is what decides.
      let waiting: (() => void)[] = [];
      let batches = 0;
      t.deps.atomic = async (q) => {
        if (isOpLogRecord(q)) return atomic(q);
        batches++;
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) for (const go of waiting.splice(0)) go();
          else setTimeout(resolve, 500);
        });
        return atomic(q);
      };
      try {
        for (const name of ['Twin', 'Other.Twin']) {
          waiting = [];
          batches = 0;
          const rs = await Promise.all([name, name.toLowerCase()].map((loginName) => addUser({ loginName })));
          expect(batches).toBe(2);
          expect(rs.map((r) => r.status).sort()).toEqual([200, 409]);
          expect(rs.find((r) => r.status === 409)!.json.msg).toContain('already taken');
          expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM users WHERE login_name = ? COLLATE NOCASE', name))!.n).toBe(1);
        }
      } finally {
        t.deps.atomic = atomic;
      }
      // Without the barrier, whichever path answers, it is never a 500.
      for (let i = 0; i < 5; i++) {
        const rs = await Promise.all(['race', 'RACE', 'Race'].map((loginName) => addUser({ loginName: `${loginName}${i}` })));
        expect(rs.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      }
    });
  });

  describe('page', () => {
    let roleId: number;
    beforeAll(async () => {
      const role = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Pagers', code: 'pagers' } });
      roleId = role.data.id;
      await newUserId({ loginName: 'pg_percent', nickName: '100% real', phone: '555-0100', roleIds: [roleId] });
      await newUserId({ loginName: 'pgXunder', nickName: 'plain', phone: '555-0101', status: 'disabled' });
      await newUserId({ loginName: "pg_quote", nickName: "O'Brien", phone: '555-0102', roleIds: [roleId] });
    });
    const page = (body: unknown) => t.call('POST', '/app/sysUser/page', { token: admin, body });

    test('the page shape, default sort and no secrets', async () => {
      const r = await page({ pageSize: 2 });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ size: 2, current: 1, searchCount: true });
      expect(r.data.records.length).toBe(2);
      expect(r.data.pages).toBe(Math.ceil(r.data.total / 2));
      expect(r.data.total).toBe(await t.count('users'));
      expect(JSON.stringify(r.json)).not.toMatch(/argon2|password/i);
      const past = await page({ pageNo: 10_000 });
      expect(past.status).toBe(200);
      expect(past.data.records).toEqual([]);
      const noCount = await page({ searchCount: false });
      expect(noCount.data).toMatchObject({ total: 0, pages: 0, searchCount: false });
    });

    test('filters: loginName, nickName, phone, status, roleId, created range', async () => {
      const names = async (params: unknown) => {
        const r = await page({ params, pageSize: 100, sortField: 'loginName', sortOrder: 'asc' });
        expect(r.status).toBe(200);
        return r.data.records.map((u: { loginName: string }) => u.loginName);
      };
      expect(await names({ loginName: 'PG_' })).toEqual(['pg_percent', 'pg_quote']);
      expect(await names({ nickName: '100%' })).toEqual(['pg_percent']);
      expect(await names({ nickName: '%' })).toEqual(['pg_percent']);
      expect(await names({ nickName: "O'Brien" })).toEqual(['pg_quote']);
      expect((await names({ phone: '555-010' })).sort()).toEqual(['pgXunder', 'pg_percent', 'pg_quote']);
      expect(await names({ phone: '555-010', status: 'disabled' })).toEqual(['pgXunder']);
      expect(await names({ roleId })).toEqual(['pg_percent', 'pg_quote']);
      expect(await names({ loginName: 'pg', createdFrom: '2026-11-22', createdTo: '2026-11-22' })).toHaveLength(3);
      expect(await names({ loginName: 'pg', createdFrom: '2026-11-23' })).toEqual([]);
      expect(await names({ loginName: 'pg', createdTo: '2026-11-21T23:59:59Z' })).toEqual([]);
    });

    test('injection strings in filters bind as data', async () => {
      const users = await t.count('users');
      for (const text of ["' OR 1=1 --", "x'); DROP TABLE users; --", '" OR ""="', '\\']) {
        const r = await page({ params: { loginName: text, nickName: text } });
        expect(r.status).toBe(200);
        expect(r.data.total).toBe(0);
      }
      expect(await t.count('users')).toBe(users);
    });

    test('sortField comes from a whitelist; other page fields are checked', async () => {
      for (const sortField of ['id', 'loginName', 'nickName', 'createdAt', 'updatedAt', 'lastLoginAt']) {
        for (const sortOrder of ['asc', 'desc']) expect((await page({ sortField, sortOrder })).status).toBe(200);
      }
      const asc = await page({ sortField: 'id', sortOrder: 'asc', pageSize: 100 });
      const ids = asc.data.records.map((u: { id: number }) => u.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      for (const body of [
        { sortField: 'password_hash' },
        { sortField: 'id; DROP TABLE users' },
        { sortField: 'login_name' },
        { sortOrder: 'sideways' },
        { pageSize: 101 },
        { pageSize: 0 },
        { pageNo: 0 },
        { pageNo: '1' },
        { params: { password: 'x' } },
        { params: { roleId: '1 OR 1=1' } },
        { params: { roleId: -1 } },
        { params: { status: 'gone' } },
        { params: { loginName: 'x'.repeat(65) } },
        { params: { createdFrom: 'yesterday' } },
        { params: { createdFrom: '2026-11-23', createdTo: '2026-11-22' } },
        { extra: 1 },
      ]) {
        const r = await page(body);
        expect(r.status).toBe(400);
        expect(r.json.data).toBeNull();
      }
    });
  });

  describe('detail and ownRole', () => {
    test('detail returns the public fields; 404 for none', async () => {
      const id = await newUserId({ loginName: 'detailme', remark: 'hi' });
      const r = await t.call('GET', `/app/sysUser/detail?id=${id}`, { token: admin });
      expect(r.status).toBe(200);
      expect(Object.keys(r.data).sort()).toEqual(
        ['avatar', 'createdAt', 'email', 'id', 'lastLoginAt', 'lastLoginIp', 'loginName', 'mfaEnabled', 'nickName', 'orgId', 'orgName', 'phone', 'postIds', 'remark', 'status', 'updatedAt', 'version'].sort(),
      );
      expect((await t.call('GET', '/app/sysUser/detail?id=999999', { token: admin })).status).toBe(404);
      expect((await t.call('GET', '/app/sysUser/ownRole?id=999999', { token: admin })).status).toBe(404);
    });

    test('bad ids are 400', async () => {
      for (const q of ['id=1%20OR%201=1', 'id=-1', 'id=0', 'id=1e3', 'id=99999999999999999999', 'id=abc', '', 'id=1&id=2', 'id=1&x=2']) {
        for (const path of ['/app/sysUser/detail', '/app/sysUser/ownRole']) {
          const r = await t.call('GET', `${path}?${q}`, { token: admin });
          expect(r.status).toBe(400);
        }
      }
      // The message names the field and the rule.
      const msg = async (q: string) => (await t.call('GET', `/app/sysUser/detail?${q}`, { token: admin })).json.msg;
      expect(await msg('id=abc')).toBe('id: must be a positive integer');
      expect(await msg('id=0')).toBe('id: must be a positive integer');
      expect(await msg('id=9007199254740993')).toBe('id: is too large');
      expect(await msg('id=9007199254740991')).toBe('User not found');
    });

    test('ownRole lists role ids', async () => {
      const id = await newUserId({ roleIds: [1] });
      expect((await t.call('GET', `/app/sysUser/ownRole?id=${id}`, { token: admin })).data).toEqual([1]);
    });
  });

  describe('edit', () => {
    const edit = (body: unknown) => t.call('POST', '/app/sysUser/edit', { token: admin, body });

    test('partial update bumps the version; omitted fields stay', async () => {
      const id = await newUserId({ loginName: 'editme', nickName: 'Before', email: 'e@example.com' });
      const r = await edit({ id, version: 1, nickName: 'After', phone: null });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ nickName: 'After', email: 'e@example.com', phone: null, version: 2, loginName: 'editme' });
      const renamed = await edit({ id, version: 2, loginName: 'Edited_Me' });
      expect(renamed.data.loginName).toBe('Edited_Me');
      expect(await t.login('edited_me', USER_PASSWORD)).toBeString();
    });

    test("a new login name equal to the user's current password is refused (any case) and changes nothing", async () => {
      // Checked as typed, lower-cased and upper-cased (a hash cannot be compared case-insensitively).
      const password = 'rename.me.pass-81';
      const id = await newUserId({ loginName: uniq('renamed'), password });
      for (const loginName of [password, password.toUpperCase(), 'Rename.Me.Pass-81']) {
        const before = await snapshot(t, 'users');
        const r = await edit({ id, version: 1, loginName });
        expect({ status: r.status, msg: r.json.msg }).toEqual({ status: 400, msg: "loginName: must not equal the user's current password" });
        expect(await snapshot(t, 'users')).toBe(before);
      }
      expect((await edit({ id, version: 1, loginName: uniq('renamed') })).status).toBe(200);
    });

    test('renames of one user are throttled like password guesses (5 per 10 minutes)', async () => {
      const id = await newUserId();
      for (let i = 1; i <= 5; i++) expect((await edit({ id, version: i, loginName: uniq('rename') })).status).toBe(200);
      const r = await edit({ id, version: 6, loginName: uniq('rename') });
      expect(r.status).toBe(429);
      expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
      // Other edits of that user are not affected.
      expect((await edit({ id, version: 6, nickName: 'Still editable' })).status).toBe(200);
    });

    test('a stale version is 409 and changes nothing', async () => {
      const id = await newUserId({ nickName: 'Stale' });
      expect((await edit({ id, version: 1, nickName: 'First' })).status).toBe(200);
      const before = await snapshot(t, 'users', 'user_role', 'sessions');
      const r = await edit({ id, version: 1, nickName: 'Second', roleIds: [1] });
      expect(r.status).toBe(409);
      expect(r.json.msg).toContain('version');
      expect(await snapshot(t, 'users', 'user_role', 'sessions')).toBe(before);
    });

    test('two parallel edits of one version: one 200, one 409', async () => {
      const id = await newUserId({ nickName: 'Racy' });
      const { result, writes } = await withWriteBarrier(t, 2, () =>
        Promise.all(['A', 'B'].map((nickName) => edit({ id, version: 1, nickName }))),
      );
      expect(writes).toBe(2);
      expect(result.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = result.find((r) => r.status === 200)!.data.nickName;
      expect(await userRow(id)).toMatchObject({ nick_name: winner, version: 2 });
    });

    test('read-only and unknown fields, passwords, missing version are refused', async () => {
      const id = await newUserId();
      const before = await snapshot(t, 'users');
      for (const body of [
        { id, version: 1, createdAt: '2000-01-01T00:00:00.000Z' },
        { id, version: 1, lastLoginAt: '2000-01-01T00:00:00.000Z' },
        { id, version: 1, password: USER_PASSWORD },
        { id, version: 1, passwordHash: 'x' },
        { id, version: 1, updatedAt: 'x' },
        { id, nickName: 'no version' },
        { id: '1', version: 1 },
        { id: [id], version: 1 },
        { id, version: '1' },
      ]) {
        const r = await edit(body);
        expect(r.status).toBe(400);
      }
      expect(await snapshot(t, 'users')).toBe(before);
      expect((await edit({ id: 999999, version: 1 })).status).toBe(404);
    });

    test('renaming onto a taken login name is 409', async () => {
      await newUserId({ loginName: 'taken_name' });
      const id = await newUserId();
      const r = await edit({ id, version: 1, loginName: 'TAKEN_NAME' });
      expect(r.status).toBe(409);
      expect(r.json.msg).toContain('loginName');
    });

    test('roleIds and status through edit; unknown role leaves everything as it was', async () => {
      const id = await newUserId({ roleIds: [1] });
      const before = await snapshot(t, 'users', 'user_role');
      const bad = await edit({ id, version: 1, nickName: 'x', roleIds: [424242] });
      expect(bad.status).toBe(400);
      expect(bad.json.msg).toContain('424242');
      expect(await snapshot(t, 'users', 'user_role')).toBe(before);
      const token = await t.login((await userRow(id))!.login_name, USER_PASSWORD);
      const r = await edit({ id, version: 1, roleIds: [], status: 'disabled' });
      expect(r.status).toBe(200);
      expect(await roleIdsOf(id)).toEqual([]);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(401);
    });
  });

  describe('delete', () => {
    const del = (body: unknown, token = admin) => t.call('POST', '/app/sysUser/delete', { token, body });

    test('removes users with their grants and sessions', async () => {
      const a = await newUserId({ loginName: 'del_a', roleIds: [1] });
      const b = await newUserId({ loginName: 'del_b' });
      const token = await t.login('del_a', USER_PASSWORD);
      const r = await del({ ids: [a, b, a, 987654] });
      expect(r.status).toBe(200);
      expect(await userRow(a)).toBeNull();
      expect(await userRow(b)).toBeNull();
      expect(await roleIdsOf(a)).toEqual([]);
      expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM sessions WHERE user_id IN (?, ?)', a, b))!.n).toBe(0);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(401);
    });

    test('bad ids are 400 and delete nothing', async () => {
      await newUserId();
      const before = await snapshot(t, 'users', 'user_role', 'sessions');
      for (const body of [
        { ids: ['2'] },
        { ids: [-2] },
        { ids: [0] },
        { ids: [1.5] },
        { ids: [1e20] },
        { ids: [9007199254740992] },
        { ids: '1 OR 1=1' },
        { ids: ['1 OR 1=1'] },
        { ids: [[2]] },
        { ids: [] },
        { ids: Array.from({ length: 101 }, (_, i) => i + 2) },
        { ids: [2], extra: true },
        {},
      ]) {
        const r = await del(body);
        expect(r.status).toBe(400);
      }
      const raw = await t.call('POST', '/app/sysUser/delete', { token: admin, body: '{"ids":[1e309]}' });
      expect(raw.status).toBe(400);
      expect(await snapshot(t, 'users', 'user_role', 'sessions')).toBe(before);
    });

    test('100 ids is the limit and is accepted', async () => {
      const r = await del({ ids: Array.from({ length: 100 }, (_, i) => 500_000 + i) });
      expect(r.status).toBe(200);
    });
  });

  describe('changeStatus and resetPassword', () => {
    test('disabling revokes the sessions; re-enabling does not revive them', async () => {
      const id = await newUserId({ loginName: 'statususer' });
      const token = await t.login('statususer', USER_PASSWORD);
      const off = await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body: { id, status: 'disabled' } });
      expect(off.status).toBe(200);
      expect((await userRow(id))!.status).toBe('disabled');
      expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NULL', id))!.n).toBe(0);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(401);
      const login = await t.call('POST', '/auth/login', { body: { loginName: 'statususer', password: USER_PASSWORD } });
      expect(login.status).toBe(403);
      expect((await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body: { id, status: 'enabled' } })).status).toBe(200);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(401);
      expect(await t.login('statususer', USER_PASSWORD)).toBeString();
    });

    test('bad bodies and unknown users', async () => {
      for (const body of [{ id: 1 }, { id: 1, status: 'off' }, { id: '1', status: 'enabled' }, { id: 1, status: 'enabled', version: 1 }]) {
        expect((await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body })).status).toBe(400);
      }
      expect((await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body: { id: 999999, status: 'enabled' } })).status).toBe(404);
      expect((await t.call('POST', '/app/sysUser/resetPassword', { token: admin, body: { id: 999999, newPassword: 'Another-Passw0rd-7' } })).status).toBe(404);
    });

    test('resetPassword applies the policy and ends every session of that user', async () => {
      const id = await newUserId({ loginName: 'resetme_user' });
      const token = await t.login('resetme_user', USER_PASSWORD);
      for (const newPassword of ['short', 'RESETME_USER', 'qwerty123', 'y'.repeat(129)]) {
        const hash = (await userRow(id))!.password_hash;
        const r = await t.call('POST', '/app/sysUser/resetPassword', { token: admin, body: { id, newPassword } });
        expect(r.status).toBe(400);
        expect(r.json.msg).toContain('newPassword');
        expect((await userRow(id))!.password_hash).toBe(hash);
      }
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(200);
      const r = await t.call('POST', '/app/sysUser/resetPassword', { token: admin, body: { id, newPassword: 'Brand-New-Passw0rd' } });
      expect(r.status).toBe(200);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status).toBe(401);
      expect((await t.call('POST', '/auth/login', { body: { loginName: 'resetme_user', password: USER_PASSWORD } })).status).toBe(401);
      expect(await t.login('resetme_user', 'Brand-New-Passw0rd')).toBeString();
    });
  });

  describe('grantRole', () => {
    const grant = (body: unknown) => t.call('POST', '/app/sysUser/grantRole', { token: admin, body });

    test('replaces the set; an empty list revokes all', async () => {
      const r1 = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'G1', code: 'grant_one' } });
      const r2 = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'G2', code: 'grant_two' } });
      const id = await newUserId({ roleIds: [r1.data.id] });
      expect((await grant({ userId: id, roleIds: [r2.data.id, 1, r2.data.id] })).status).toBe(200);
      expect(await roleIdsOf(id)).toEqual([1, r2.data.id]);
      expect((await t.call('GET', `/app/sysUser/ownRole?id=${id}`, { token: admin })).data).toEqual([1, r2.data.id]);
      expect((await grant({ userId: id, roleIds: [] })).status).toBe(200);
      expect(await roleIdsOf(id)).toEqual([]);
    });

    test('an unknown role fails half-way and leaves the old set', async () => {
      const id = await newUserId({ roleIds: [1] });
      const r = await grant({ userId: id, roleIds: [1, 31337] });
      expect(r.status).toBe(400);
      expect(r.json.msg).toBe('roleIds: unknown role id 31337');
      expect(await roleIdsOf(id)).toEqual([1]);
    });

    test('bad bodies', async () => {
      const id = await newUserId();
      for (const body of [
        { userId: id },
        { userId: id, roleIds: '1' },
        { userId: id, roleIds: ['1 OR 1=1'] },
        { userId: id, roleIds: Array.from({ length: 1001 }, (_, i) => i + 1) },
        { userId: -1, roleIds: [] },
        { userId: id, roleIds: [], extra: 1 },
      ]) {
        expect((await grant(body)).status).toBe(400);
      }
      expect((await grant({ userId: 999999, roleIds: [] })).status).toBe(404);
    });
  });

  describe('op log', () => {
    test('every write records a row, failures included, with passwords redacted', async () => {
      const rows = () => t.rows("SELECT * FROM op_log WHERE module = 'sysUser' ORDER BY id DESC");
      const before = (await rows()).length;
      await addUser({ loginName: 'oplogged', password: 'Secret-Oplog-Pass1' });
      await addUser({ loginName: 'oplogged', password: 'Secret-Oplog-Pass2' });
      const id = (await t.row<{ id: number }>("SELECT id FROM users WHERE login_name = 'oplogged'"))!.id;
      await t.call('POST', '/app/sysUser/resetPassword', { token: admin, body: { id, newPassword: 'Secret-Oplog-Pass3' } });
      await t.call('POST', '/app/sysUser/delete', { token: admin, body: { ids: ['x'] } });
      await t.call('POST', '/app/sysUser/page', { token: admin, body: {} });
      await t.call('GET', '/app/sysUser/detail?id=1', { token: admin });
      const after = await rows();
      const added = after.slice(0, after.length - before);
      expect(added.map((r) => [r.action, r.status])).toEqual([
        ['delete', 400],
        ['resetPassword', 200],
        ['add', 409],
        ['add', 200],
      ]);
      expect(added[0]!.error_msg).toContain('ids');
      expect(added[2]!.error_msg).toContain('already taken');
      expect(added.every((r) => r.operator_name === 'admin' && r.trace_id.length === 32)).toBe(true);
      const all = JSON.stringify(after);
      expect(all).not.toContain('Secret-Oplog-Pass');
      expect(all).not.toContain(ADMIN_PASSWORD);
      expect(JSON.parse(added[1]!.params)).toEqual({ id, newPassword: '[REDACTED]' });
    });
  });

  describe('D1 limits', () => {
    test('batch actions with 100 ids stay within 100 bound parameters per statement', async () => {
      const atomic = t.deps.atomic;
      let most = 0;
      t.deps.atomic = (q) => {
        for (const s of q) most = Math.max(most, s.parameters.length);
        return atomic(q);
      };
      try {
        const ids = Array.from({ length: 100 }, (_, i) => 700_000 + i);
        const role = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Wide', code: 'wide_role' } });
        const user = await newUserId();
        const calls: [string, unknown][] = [
          ['/app/sysUser/delete', { ids }],
          ['/app/sysUser/grantRole', { userId: user, roleIds: [role.data.id, ...ids.slice(1)] }],
          ['/app/sysUser/add', { loginName: 'wide_user', password: USER_PASSWORD, roleIds: [role.data.id, ...ids.slice(1)] }],
          ['/app/sysRole/grantMenu', { roleId: role.data.id, menuIds: ids }],
          ['/app/sysRole/delete', { ids }],
        ];
        for (const [path, body] of calls) {
          const r = await t.call('POST', path, { token: admin, body });
          expect(r.status).toBeLessThan(500);
        }
        expect(most).toBeGreaterThan(0);
        expect(most).toBeLessThanOrEqual(20);
      } finally {
        t.deps.atomic = atomic;
      }
    });
  });
}
