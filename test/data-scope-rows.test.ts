import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { get, upload } from './support/files.ts';
import { png } from './support/images.ts';

/**
 * Data scope on rows that concern a user, on Bun and on a real D1: online sessions (their user),
 * login-log rows (the user logging in), op-log rows (the operator), files and images (their
 * uploader); and signed links only for holders of the download/preview code.
 *
 * The tree: co ─┬─ a ── a1
 *               └─ b
 * A manager with scope orgAndBelow in `a` sees uA1 and uA, not uB nor uNone.
 */

const PASSWORD = 'Valid-Passw0rd-9';

for (const runtime of RUNTIMES) {
  describe(`data scope on sessions, logs and files (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    let seq = 0;
    const org = { co: 0, a: 0, a1: 0, b: 0 };
    const u: Record<'a1' | 'a' | 'b' | 'none', { id: number; loginName: string; token: string }> = {} as never;
    const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
    const menuIds = async (codes: readonly string[]) =>
      (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(codes))).map((r) => r.id);

    async function roleWith(codes: readonly string[], dataScope: string) {
      const code = `rows_role_${++seq}`;
      const r = await post('/app/sysRole/add', { name: code, code, dataScope });
      expect(r.status).toBe(200);
      expect((await post('/app/sysRole/grantMenu', { roleId: r.data.id, menuIds: await menuIds(codes) })).status).toBe(200);
      return r.data.id as number;
    }

    async function user(orgId: number | null, codes: readonly string[] = [], dataScope = 'self') {
      const loginName = `rows_user_${++seq}`;
      const roleIds = codes.length ? [await roleWith(codes, dataScope)] : [];
      const r = await post('/app/sysUser/add', { loginName, password: PASSWORD, orgId, roleIds });
      expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
      return { id: r.data.id as number, loginName, token: await t.login(loginName, PASSWORD) };
    }

    const sessionOf = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
    const alive = async (token: string) => (await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token })).status === 200;

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      for (const [k, parent] of [['co', 0], ['a', 'co'], ['a1', 'a'], ['b', 'co']] as const) {
        const r = await post('/app/sysOrg/add', { name: k, code: `rows_${k}_${runtime}`, parentId: parent === 0 ? 0 : org[parent] });
        org[k] = r.data.id;
      }
      // Each target user uploads a file and an image (so they are the uploader) and logs in (a session, a login-log row).
      const uploader = ['sys:file:upload', 'sys:image:upload'];
      u.a1 = await user(org.a1, uploader);
      u.a = await user(org.a, uploader);
      u.b = await user(org.b, uploader);
      u.none = await user(null, uploader);
      for (const x of Object.values(u)) {
        expect((await upload(t, 'sysFile', x.token, { filename: `${x.loginName}.txt`, type: 'text/plain', data: `by ${x.loginName}` })).status).toBe(200);
        expect((await upload(t, 'sysImage', x.token, { filename: `${x.loginName}.png`, type: 'image/png', data: png(2 + x.id, 2) })).status).toBe(200);
      }
      // A failed login with an unknown name: a login-log row with no known user.
      expect((await t.call('POST', '/auth/login', { body: { loginName: 'rows_ghost', password: 'Wrong-Password-1' } })).status).toBe(401);
    }, D1_START_MS);

    const ofTargets = (ids: number[]) => ({
      a1: ids.includes(u.a1.id),
      a: ids.includes(u.a.id),
      b: ids.includes(u.b.id),
      none: ids.includes(u.none.id),
    });
    const IN_A = { a1: true, a: true, b: false, none: false };
    const ALL = { a1: true, a: true, b: true, none: true };

    describe('online sessions', () => {
      test('page lists only sessions of users in scope; forceLogout skips the others and ends those in scope', async () => {
        // The targets upload, so the manager holds those codes too (containment).
        const m = await user(org.a, ['sys:online:page', 'sys:online:forceLogout', 'sys:file:upload', 'sys:image:upload'], 'orgAndBelow');
        const page = await post('/app/sysOnlineUser/page', { pageSize: 100 }, m.token);
        expect(ofTargets(page.data.records.map((r: any) => r.userId))).toEqual(IN_A);
        // Outside the scope: skipped like an unknown id (200, nothing revoked).
        const b2 = await t.login(u.b.loginName, PASSWORD);
        const outside = await post('/app/sysOnlineUser/forceLogout', { sessionIds: [sessionOf(b2)] }, m.token);
        expect(outside.data).toEqual({ revoked: 0 });
        expect(await alive(b2)).toBe(true);
        const a2 = await t.login(u.a1.loginName, PASSWORD);
        const inside = await post('/app/sysOnlineUser/forceLogout', { sessionIds: [sessionOf(a2), sessionOf(b2)] }, m.token);
        expect(inside.data).toEqual({ revoked: 1 });
        expect([await alive(a2), await alive(b2)]).toEqual([false, true]);
      });

      test("only a super admin ends a super admin's session; a user holding codes the caller lacks is 403", async () => {
        const m = await user(org.a, ['sys:online:page', 'sys:online:forceLogout'], 'all');
        const adminSession = sessionOf(admin);
        const before = await t.rows('SELECT id, revoked_at FROM sessions ORDER BY id');
        const r = await post('/app/sysOnlineUser/forceLogout', { sessionIds: [adminSession] }, m.token);
        expect(`${r.status} ${r.json.msg}`).toBe("403 Only a super administrator can end a super administrator's session");
        const strong = await user(org.a, ['sys:opLog:clear']);
        const r2 = await post('/app/sysOnlineUser/forceLogout', { sessionIds: [sessionOf(strong.token)] }, m.token);
        expect(`${r2.status} ${r2.json.msg}`).toMatch(/^403 .*outside your authority/);
        expect((await t.rows('SELECT id, revoked_at FROM sessions WHERE id <> ? ORDER BY id', sessionOf(strong.token))).length).toBe(before.length);
        expect(await alive(admin)).toBe(true);
        expect(await alive(strong.token)).toBe(true);
        // A super admin may.
        const other = await t.login();
        expect((await post('/app/sysOnlineUser/forceLogout', { sessionIds: [sessionOf(other)] })).data).toEqual({ revoked: 1 });
      });
    });

    describe('login log', () => {
      test('page shows rows of users in scope; rows with no known user only under all', async () => {
        const m = await user(org.a, ['sys:loginLog:page'], 'orgAndBelow');
        const all = await user(org.a, ['sys:loginLog:page'], 'all');
        const rows = (await post('/app/sysLoginLog/page', { pageSize: 100 }, m.token)).data.records;
        expect(ofTargets(rows.map((r: any) => r.userId))).toEqual(IN_A);
        expect(rows.some((r: any) => r.userId === null)).toBe(false);
        const allRows = (await post('/app/sysLoginLog/page', { pageSize: 100 }, all.token)).data.records;
        expect(ofTargets(allRows.map((r: any) => r.userId))).toEqual(ALL);
        expect(allRows.some((r: any) => r.loginName === 'rows_ghost' && r.userId === null)).toBe(true);
      });

      test('delete skips rows outside the scope; clear clears only rows in scope', async () => {
        const m = await user(org.a, ['sys:loginLog:page', 'sys:loginLog:delete', 'sys:loginLog:clear'], 'orgAndBelow');
        const rowOf = async (userId: number) => (await t.row<{ id: number }>('SELECT id FROM login_log WHERE user_id = ? ORDER BY id LIMIT 1', userId))!.id;
        const [inA1, inB] = [await rowOf(u.a1.id), await rowOf(u.b.id)];
        const del = await post('/app/sysLoginLog/delete', { ids: [inA1, inB] }, m.token);
        expect(del.data).toEqual({ deleted: 1 });
        expect(await t.row('SELECT id FROM login_log WHERE id = ?', inB)).not.toBeNull();
        const OUTSIDE = 'SELECT id FROM login_log WHERE user_id IS NULL OR user_id NOT IN (SELECT id FROM users WHERE org_id IN (?, ?)) ORDER BY id';
        const outsideBefore = await t.rows(OUTSIDE, org.a, org.a1);
        expect(outsideBefore.length).toBeGreaterThan(2);
        expect((await post('/app/sysLoginLog/clear', {}, m.token)).status).toBe(200);
        expect(await t.rows(OUTSIDE, org.a, org.a1)).toEqual(outsideBefore);
        expect(await t.rows('SELECT id FROM login_log WHERE user_id IN (?, ?)', u.a1.id, u.a.id)).toEqual([]);
      });
    });

    describe('operation log', () => {
      test('page, detail, delete and clear follow the operator', async () => {
        const m = await user(org.a, ['sys:opLog:page', 'sys:opLog:detail', 'sys:opLog:delete', 'sys:opLog:clear'], 'orgAndBelow');
        const opRow = async (userId: number) => (await t.row<{ id: number }>('SELECT id FROM op_log WHERE operator_id = ? ORDER BY id LIMIT 1', userId))!.id;
        // The uploads of setup wrote op-log rows for each uploader.
        const [inA, inB] = [await opRow(u.a.id), await opRow(u.b.id)];
        const page = (await post('/app/sysOpLog/page', { pageSize: 100 }, m.token)).data.records;
        expect(ofTargets(page.map((r: any) => r.operatorId))).toEqual(IN_A);
        expect((await t.call('GET', `/app/sysOpLog/detail?id=${inA}`, { token: m.token })).status).toBe(200);
        expect((await t.call('GET', `/app/sysOpLog/detail?id=${inB}`, { token: m.token })).status).toBe(404);
        expect((await post('/app/sysOpLog/delete', { ids: [inB] }, m.token)).data).toEqual({ deleted: 0 });
        const OUTSIDE = 'SELECT id FROM op_log WHERE operator_id IS NULL OR operator_id NOT IN (SELECT id FROM users WHERE org_id IN (?, ?)) ORDER BY id';
        const outside = await t.rows(OUTSIDE, org.a, org.a1);
        expect((await post('/app/sysOpLog/clear', {}, m.token)).status).toBe(200);
        // Rows outside the scope (admin's, uB's, uNone's) stay; the clear's own row is written after it.
        expect(await t.rows(OUTSIDE, org.a, org.a1)).toEqual(outside);
        expect(await t.rows('SELECT id FROM op_log WHERE operator_id IN (?, ?)', u.a1.id, u.a.id)).toEqual([]);
      });
    });

    describe('files and images', () => {
      for (const [module, kind, pageCode, fetchCode, action] of [
        ['sysFile', 'file', 'sys:file:page', 'sys:file:download', 'download'],
        ['sysImage', 'image', 'sys:image:page', 'sys:image:preview', 'preview'],
      ] as const) {
        test(`${module}: page, detail, ${action} and delete follow the uploader`, async () => {
          const m = await user(org.a, [pageCode, `sys:${kind}:detail`, `sys:${kind}:delete`, fetchCode], 'orgAndBelow');
          const page = (await post(`/app/${module}/page`, { pageSize: 100 }, m.token)).data.records;
          expect(ofTargets(page.map((r: any) => r.createdBy))).toEqual(IN_A);
          const idOf = async (userId: number) => (await t.row<{ id: number }>('SELECT id FROM files WHERE created_by = ? AND kind = ?', userId, kind))!.id;
          const [inA1, inB] = [await idOf(u.a1.id), await idOf(u.b.id)];
          expect((await t.call('GET', `/app/${module}/detail?id=${inA1}`, { token: m.token })).status).toBe(200);
          expect((await t.call('GET', `/app/${module}/detail?id=${inB}`, { token: m.token })).status).toBe(404);
          expect((await get(t, `/app/${module}/${action}?id=${inA1}`, m.token)).status).toBe(200);
          expect((await get(t, `/app/${module}/${action}?id=${inB}`, m.token)).status).toBe(404);
          expect((await post(`/app/${module}/delete`, { ids: [inB] }, m.token)).status).toBe(200);
          expect(await t.row('SELECT id FROM files WHERE id = ?', inB)).not.toBeNull();
        });

        test(`${module}: url only for holders of ${fetchCode}; a link names its record and its action`, async () => {
          const reader = await user(null, [pageCode, `sys:${kind}:detail`], 'all');
          const holder = await user(null, [pageCode, `sys:${kind}:detail`, fetchCode], 'all');
          const id = (await t.row<{ id: number }>('SELECT id FROM files WHERE created_by = ? AND kind = ?', u.a.id, kind))!.id;
          const other = (await t.row<{ id: number }>('SELECT id FROM files WHERE created_by = ? AND kind = ?', u.b.id, kind))!.id;
          const readerPage = (await post(`/app/${module}/page`, { pageSize: 100 }, reader.token)).data.records;
          expect(readerPage.length).toBeGreaterThan(0);
          expect(readerPage.every((r: any) => r.url === null)).toBe(true);
          expect((await t.call('GET', `/app/${module}/detail?id=${id}`, { token: reader.token })).data.url).toBeNull();
          expect((await get(t, `/app/${module}/${action}?id=${id}`, reader.token)).status).toBe(403);
          const url = (await t.call('GET', `/app/${module}/detail?id=${id}`, { token: holder.token })).data.url as string;
          expect(url).toStartWith(`/app/${module}/${action}?id=${id}&`);
          expect((await get(t, url)).status).toBe(200);
          // The same signature for another record, or as the other action, is refused.
          expect((await get(t, url.replace(`id=${id}&`, `id=${other}&`))).status).toBe(401);
          const otherModule = module === 'sysFile' ? 'sysImage/preview' : 'sysFile/download';
          expect((await get(t, url.replace(`${module}/${action}`, otherModule))).status).toBe(401);
        });
      }

      test('an uploader without the download code gets url null on upload; with it, a link', async () => {
        const plain = await user(org.a, ['sys:file:upload'], 'orgAndBelow');
        const up = await upload(t, 'sysFile', plain.token, { filename: 'x.txt', type: 'text/plain', data: 'x' });
        expect(up.data.url).toBeNull();
        const holder = await user(org.a, ['sys:file:upload', 'sys:file:download'], 'orgAndBelow');
        const up2 = await upload(t, 'sysFile', holder.token, { filename: 'y.txt', type: 'text/plain', data: 'y' });
        expect(up2.data.url).toStartWith('/app/sysFile/download?id=');
      });
    });

    test('overlapping roles (orgAndBelow + org + a custom list naming a parent and its child, then + self): each organisation once, pages exact', async () => {
      // scopeOrgs names an organisation once per role that reaches it (UNION ALL, no sort): lists
      // read from it are deduplicated, and every use as a filter is a membership test.
      const m = await user(org.a, ['sys:user:page'], 'orgAndBelow');
      const roleOf = (await t.row<{ role_id: number }>('SELECT role_id FROM user_role WHERE user_id = ?', m.id))!.role_id;
      const codes = await menuIds(['sys:user:page']);
      const extra: number[] = [];
      for (const body of [{ dataScope: 'org' }, { dataScope: 'custom', scopeOrgIds: [org.a, org.a1] }]) {
        const code = `rows_overlap_${++seq}`;
        const r = await post('/app/sysRole/add', { name: code, code, ...body });
        expect(r.status).toBe(200);
        expect((await post('/app/sysRole/grantMenu', { roleId: r.data.id, menuIds: codes })).status).toBe(200);
        extra.push(r.data.id);
      }
      expect((await post('/app/sysUser/grantRole', { userId: m.id, roleIds: [roleOf, ...extra] })).status).toBe(200);
      const info = (await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: m.token })).data;
      expect(info.dataScope).toEqual({ all: false, orgIds: [org.a, org.a1].sort((x, y) => x - y), self: false });
      const expected = async () =>
        (await t.rows<{ id: number }>('SELECT u.id FROM users u JOIN org_closure c ON c.descendant_id = u.org_id WHERE c.ancestor_id = ? ORDER BY u.id', org.a)).map((r) => r.id);
      for (let round = 0; round < 2; round++) {
        // Twice: the second page goes out with the plan hint of the first (users.repo.ts).
        const page = (await post('/app/sysUser/page', { pageSize: 100 }, m.token)).data;
        expect([page.total, page.records.map((r: { id: number }) => r.id).sort((x: number, y: number) => x - y)]).toEqual([(await expected()).length, await expected()]);
      }
      // With a self role on top, the page binds the list and adds the caller's own row (they are in a already).
      const self = await roleWith(['sys:user:page'], 'self');
      expect((await post('/app/sysUser/grantRole', { userId: m.id, roleIds: [roleOf, ...extra, self] })).status).toBe(200);
      const withSelf = (await post('/app/sysUser/page', { pageSize: 100 }, m.token)).data;
      expect([withSelf.total, withSelf.records.map((r: { id: number }) => r.id).sort((x: number, y: number) => x - y)]).toEqual([(await expected()).length, await expected()]);
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: m.token })).data.dataScope).toEqual({ all: false, orgIds: [org.a, org.a1].sort((x, y) => x - y), self: true });
    });

    test('getLoginUserInformation carries org and the effective data scope', async () => {
      const m = await user(org.a, ['sys:user:page'], 'orgAndBelow');
      const info = (await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: m.token })).data;
      expect(info.org).toEqual({ id: org.a, name: 'a' });
      expect(info.dataScope).toEqual({ all: false, orgIds: [org.a, org.a1].sort((x, y) => x - y), self: false });
      const none = (await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: u.none.token })).data;
      expect(none.org).toBeNull();
      expect(none.dataScope).toEqual({ all: false, orgIds: [], self: true });
      const adm = (await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: admin })).data;
      expect(adm.dataScope).toEqual({ all: true, orgIds: [], self: true });
    });
  });
}
