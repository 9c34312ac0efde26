import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { get, upload } from './support/files.ts';
import { WORLD_PASSWORD, delegationWorld } from './support/delegation-world.ts';
import { scratchDir } from './support/tmp-root.ts';
import { serverBackupArchives } from '../src/adapters/server/backup-archive.ts';
import { bunSqlExec, openBunSqlite } from '../src/adapters/bun/sqlite.ts';

/**
 * Issue 26, "Delegation closed on every path": each bullet of its "Why" as a named regression, on
 * Bun and on a real D1 (contract: "Delegation: who may act on whom", "What scope filters",
 * "Authentication"). Every refusal is checked to have changed nothing.
 * The world (organisations, fixtures): test/support/delegation-world.ts.
 */

const PASSWORD = WORLD_PASSWORD;

for (const runtime of RUNTIMES) {
  describe(`issue 26 regressions (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    let w: Awaited<ReturnType<typeof delegationWorld>>;
    let org: typeof w.org;
    const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
    const menuIds = (codes: readonly string[]) => w.menuIds(codes);
    const role = (codes: readonly string[], dataScope = 'self') => w.role(codes, dataScope);
    const user = (orgId: number | null, roleIds: number[] = []) => w.user(orgId, roleIds);
    const caller = (codes: readonly string[], dataScope: string, orgId: number | null) => w.caller(codes, dataScope, orgId);
    const refused = (path: string, body: unknown, token: string, status: number, msg?: RegExp) => w.refused(path, body, token, status, msg);
    const buttonOf = async (code: string) => (await t.row<{ id: number; version: number }>('SELECT id, version FROM menus WHERE permission = ?', code))!;
    let seq = 0;

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      // Backups as the server start-up wires them (on Workers there are none: 501).
      if (t.runtime === 'bun') t.deps.backups = serverBackupArchives({ dir: scratchDir('backups'), sql: bunSqlExec(t.sqlite), openSqlite: openBunSqlite, blobs: t.deps.blobs! });
      admin = await t.login();
      w = await delegationWorld(t, admin, `c26_${runtime}`);
      org = w.org;
    }, D1_START_MS);

    test('a delegated admin cannot raise her own data scope to all (grantDataScope, edit, a custom list, a self-grant)', async () => {
      const m = await caller(['sys:role:grantDataScope', 'sys:role:edit', 'sys:user:grantRole', 'sys:user:resetPassword', 'sys:user:detail'], 'orgAndBelow', org.sales);
      const victim = await user(org.support);
      await refused('/app/sysRole/grantDataScope', { roleId: m.roleId, dataScope: 'all' }, m.token, 403);
      await refused('/app/sysRole/grantDataScope', { roleId: m.roleId, dataScope: 'custom', scopeOrgIds: [org.support] }, m.token, 403);
      await refused('/app/sysRole/grantDataScope', { roleId: m.roleId, dataScope: 'custom', scopeOrgIds: [org.co] }, m.token, 403);
      const v = (await t.row<{ version: number }>('SELECT version FROM roles WHERE id = ?', m.roleId))!.version;
      await refused('/app/sysRole/edit', { id: m.roleId, version: v, dataScope: 'all' }, m.token, 403);
      // Through a second role of scope `all` that carries nothing: given to herself.
      const wide = await role([], 'all');
      await refused('/app/sysUser/grantRole', { userId: m.id, roleIds: [m.roleId, wide] }, m.token, 403);
      expect((await t.row('SELECT data_scope FROM roles WHERE id = ?', m.roleId))!.data_scope).toBe('orgAndBelow');
      // So she still cannot reach the other branch.
      expect((await post('/app/sysUser/resetPassword', { id: victim.id, newPassword: 'Another-Passw0rd-7' }, m.token)).status).toBe(404);
      // Narrowing her own role, or a scope no wider than hers, is fine.
      expect((await post('/app/sysRole/grantDataScope', { roleId: m.roleId, dataScope: 'custom', scopeOrgIds: [org.sales] }, m.token)).status).toBe(200);
    });

    test('a holder of sys:menu:edit cannot switch a disabled code back on, nor disable or delete a code she lacks', async () => {
      const clear = await buttonOf('sys:loginLog:clear');
      const m = await caller(['sys:menu:edit', 'sys:menu:delete', 'sys:menu:detail', 'sys:loginLog:clear'], 'all', org.sales);
      const off = await post('/app/sysMenu/edit', { id: clear.id, version: clear.version, status: 'disabled' });
      expect(off.status).toBe(200);
      try {
        await refused('/app/sysMenu/edit', { id: clear.id, version: off.data.version, status: 'enabled' }, m.token, 403);
        expect((await post('/app/sysLoginLog/clear', {}, m.token)).status).toBe(403);
        // Codes she lacks: disabled, renamed, moved or deleted by her: 403.
        const backup = await buttonOf('sys:backup:create');
        await refused('/app/sysMenu/edit', { id: backup.id, version: backup.version, status: 'disabled' }, m.token, 403);
        await refused('/app/sysMenu/edit', { id: backup.id, version: backup.version, title: 'mine now' }, m.token, 403);
        await refused('/app/sysMenu/delete', { ids: [backup.id] }, m.token, 403);
        // A code she holds (enabled), or a menu without a code: hers to edit.
        const edit = await buttonOf('sys:menu:edit');
        expect((await post('/app/sysMenu/edit', { id: edit.id, version: edit.version, title: 'Menus: edit (renamed)' }, m.token)).status).toBe(200);
        const dir = (await t.row<{ id: number; version: number }>("SELECT id, version FROM menus WHERE permission IS NULL AND type = 'directory' ORDER BY id LIMIT 1"))!;
        expect((await post('/app/sysMenu/edit', { id: dir.id, version: dir.version, icon: 'star' }, m.token)).status).toBe(200);
      } finally {
        const now = await buttonOf('sys:loginLog:clear');
        expect((await post('/app/sysMenu/edit', { id: clear.id, version: now.version, status: 'enabled' })).status).toBe(200);
      }
    });

    test('a role belongs to its holders: a role held by someone outside the caller\'s scope cannot be changed', async () => {
      const ROLE_OPS = ['sys:role:grantMenu', 'sys:role:changeStatus', 'sys:role:edit', 'sys:role:grantDataScope', 'sys:role:delete', 'sys:user:page'];
      const m = await caller(ROLE_OPS, 'orgAndBelow', org.sales);
      const supportRole = await role(['sys:user:page']);
      await user(org.support, [supportRole]);
      const v = (await t.row<{ version: number }>('SELECT version FROM roles WHERE id = ?', supportRole))!.version;
      const held = await menuIds(['sys:user:page', 'sys:role:grantMenu']);
      await refused('/app/sysRole/grantMenu', { roleId: supportRole, menuIds: held }, m.token, 403);
      await refused('/app/sysRole/changeStatus', { id: supportRole, status: 'disabled' }, m.token, 403);
      await refused('/app/sysRole/edit', { id: supportRole, version: v, name: 'renamed' }, m.token, 403);
      await refused('/app/sysRole/grantDataScope', { roleId: supportRole, dataScope: 'self' }, m.token, 403);
      // A role held only inside her scope (or by nobody) is hers to change.
      const salesRole = await role(['sys:user:page']);
      await user(org.sales1, [salesRole]);
      expect((await post('/app/sysRole/grantMenu', { roleId: salesRole, menuIds: held }, m.token)).status).toBe(200);
      expect((await post('/app/sysRole/changeStatus', { id: salesRole, status: 'disabled' }, m.token)).status).toBe(200);
    });

    test('sysUser/add with roleIds needs sys:user:grantRole; sysRole/add with dataScope needs sys:role:grantDataScope', async () => {
      const m = await caller(['sys:user:add', 'sys:role:add', 'sys:user:page'], 'all', org.sales);
      const plain = await role([]);
      await refused('/app/sysUser/add', { loginName: `c26_new_${++seq}`, password: PASSWORD, orgId: org.sales, roleIds: [plain] }, m.token, 403, /sys:user:grantRole/);
      await refused('/app/sysRole/add', { name: 'scoped', code: `c26_scoped_${++seq}`, dataScope: 'org' }, m.token, 403, /sys:role:grantDataScope/);
      await refused('/app/sysRole/add', { name: 'scoped', code: `c26_scoped_${++seq}`, scopeOrgIds: [] }, m.token, 403, /sys:role:grantDataScope/);
      // Without those fields: fine.
      expect((await post('/app/sysUser/add', { loginName: `c26_new_${++seq}`, password: PASSWORD, orgId: org.sales }, m.token)).status).toBe(200);
      expect((await post('/app/sysRole/add', { name: 'plain', code: `c26_plain_${++seq}` }, m.token)).status).toBe(200);
    });

    test('sysUser/resetPassword on one\'s own account is refused (400): own changes ask for the old password', async () => {
      const m = await caller(['sys:user:resetPassword'], 'all', org.sales);
      const r = await refused('/app/sysUser/resetPassword', { id: m.id, newPassword: 'Taken-Over-Passw0rd-1' }, m.token, 400, /updatePassword/);
      expect(r.json.data).toBeNull();
      expect((await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: m.token })).status).toBe(200);
      // A super admin neither.
      const s = await user(null, [1]);
      await refused('/app/sysUser/resetPassword', { id: s.id, newPassword: 'Taken-Over-Passw0rd-1' }, s.token, 400);
    });

    test('a failed login of a known user carries its userId, and the admins whose scope holds that user see it', async () => {
      const target = await user(org.sales1);
      const watcher = await caller(['sys:loginLog:page'], 'orgAndBelow', org.sales);
      const outsider = await caller(['sys:loginLog:page'], 'orgAndBelow', org.support);
      expect((await t.call('POST', '/auth/login', { body: { loginName: target.loginName.toUpperCase(), password: 'Wrong-Passw0rd-1' } })).status).toBe(401);
      const row = await t.row<{ user_id: number | null }>("SELECT user_id FROM login_log WHERE login_name = ? AND status = 'failure'", target.loginName.toUpperCase());
      expect(row).toEqual({ user_id: target.id });
      const seen = async (token: string) =>
        (await post('/app/sysLoginLog/page', { pageSize: 100, params: { status: 'failure' } }, token)).data.records.filter((r: any) => r.userId === target.id).length;
      expect(await seen(watcher.token)).toBe(1);
      expect(await seen(outsider.token)).toBe(0);
      // An unknown name concerns nobody.
      expect((await t.call('POST', '/auth/login', { body: { loginName: 'c26_nobody', password: 'Wrong-Passw0rd-1' } })).status).toBe(401);
      expect(await t.row("SELECT user_id FROM login_log WHERE login_name = 'c26_nobody'")).toEqual({ user_id: null });
    });

    test('a scoped holder of the sys:backup codes gets 403 on every backup operation', async () => {
      const codes = ['sys:backup:page', 'sys:backup:create', 'sys:backup:download', 'sys:backup:delete'];
      const scoped = await caller(codes, 'orgAndBelow', org.sales);
      let id = 1;
      if (runtime === 'bun') {
        const made = await post('/app/sysBackup/create', {});
        expect(made.status).toBe(200);
        id = made.data.id;
      }
      expect((await post('/app/sysBackup/page', {}, scoped.token)).status).toBe(403);
      const down = await get(t, `/app/sysBackup/download?id=${id}`, scoped.token);
      expect(down.status).toBe(403);
      expect(down.headers.get('content-type')).toStartWith('application/json');
      await refused('/app/sysBackup/create', {}, scoped.token, 403);
      const before = await t.rows('SELECT id, status FROM backups ORDER BY id');
      await refused('/app/sysBackup/delete', { ids: [id] }, scoped.token, 403);
      expect(await t.rows('SELECT id, status FROM backups ORDER BY id')).toEqual(before);
      // A caller whose scope is `all` may (on Workers the operations answer 501).
      const wide = await caller(codes, 'all', org.sales);
      expect((await post('/app/sysBackup/page', {}, wide.token)).status).toBe(runtime === 'bun' ? 200 : 501);
    });

    describe('a signed link stops working when the session that got it ends', () => {
      const CODES = ['sys:file:upload', 'sys:file:download', 'sys:file:detail', 'sys:user:edit'];
      async function linked() {
        const u = await caller(CODES, 'self', org.sales);
        const up = await upload(t, 'sysFile', u.token, { filename: 'a.txt', type: 'text/plain', data: `by ${u.loginName}` });
        expect(up.status).toBe(200);
        const url = up.data.url as string;
        expect(url).toStartWith('/app/sysFile/download?');
        expect((await get(t, url)).status).toBe(200);
        return { ...u, url, fileId: up.data.id as number };
      }
      const sessionOf = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
      const ended = async (url: string) => {
        const r = await get(t, url);
        expect(r.status).toBe(401);
        expect(((await r.json()) as { data: unknown }).data).toBeNull();
      };

      test('logout', async () => {
        const u = await linked();
        expect((await post('/auth/logout', undefined, u.token)).status).toBe(200);
        await ended(u.url);
      });
      test('force logout', async () => {
        const u = await linked();
        expect((await post('/app/sysOnlineUser/forceLogout', { sessionIds: [sessionOf(u.token)] })).status).toBe(200);
        await ended(u.url);
      });
      test('own password change (from another session)', async () => {
        const u = await linked();
        const other = await t.login(u.loginName, PASSWORD);
        expect((await post('/app/sysLoginUser/updatePassword', { oldPassword: PASSWORD, newPassword: 'Changed-Passw0rd-2' }, other)).status).toBe(200);
        await ended(u.url);
      });
      test('password reset, disable and delete', async () => {
        const a = await linked();
        expect((await post('/app/sysUser/resetPassword', { id: a.id, newPassword: 'Reset-Passw0rd-3' })).status).toBe(200);
        await ended(a.url);
        const b = await linked();
        expect((await post('/app/sysUser/changeStatus', { id: b.id, status: 'disabled' })).status).toBe(200);
        await ended(b.url);
        const c = await linked();
        expect((await post('/app/sysUser/delete', { ids: [c.id] })).status).toBe(200);
        await ended(c.url);
      });
      test('a link made by another live session of the same user keeps working; a forged session is refused', async () => {
        const u = await linked();
        const second = await t.login(u.loginName, PASSWORD);
        const url2 = (await t.call('GET', `/app/sysFile/detail?id=${u.fileId}`, { token: second })).data.url as string;
        expect((await post('/auth/logout', undefined, u.token)).status).toBe(200);
        await ended(u.url);
        expect((await get(t, url2)).status).toBe(200);
        // The session named in a link is signed: pointing it at another session breaks the signature.
        const swapped = url2.replace(/([?&]s=)[^&]+/, `$1${sessionOf(admin)}`);
        expect(swapped).not.toBe(url2);
        expect((await get(t, swapped)).status).toBe(401);
      });
    });

    test('every JSON answer to a request with a token is Cache-Control: no-store; downloads at least private', async () => {
      const u = await caller(['sys:file:upload', 'sys:file:download', 'sys:user:detail'], 'all', org.sales);
      const detail = await t.call('GET', `/app/sysUser/detail?id=${u.id}`, { token: u.token });
      expect(detail.status).toBe(200);
      expect(detail.res.headers.get('cache-control')).toBe('no-store');
      const denied = await post('/app/sysRole/page', {}, u.token);
      expect(denied.status).toBe(403);
      expect(denied.res.headers.get('cache-control')).toBe('no-store');
      const tree = await t.call('GET', '/app/sysOrg/tree', { token: admin });
      expect(tree.status).toBe(200);
      expect(tree.res.headers.get('cache-control')).toBe('no-store');
      const up = await upload(t, 'sysFile', u.token, { filename: 'c.txt', type: 'text/plain', data: 'cache me not' });
      expect(up.res.headers.get('cache-control')).toBe('no-store');
      for (const res of [await get(t, `/app/sysFile/download?id=${up.data.id}`, u.token), await get(t, up.data.url)]) {
        expect(res.status).toBe(200);
        expect(res.headers.get('cache-control') ?? '').toMatch(/\b(private|no-store)\b/);
      }
    });

    test('/openapi.json does not reflect the Host header', async () => {
      const r = await t.app.request('http://evil.example/openapi.json', { headers: { host: 'evil.example' } });
      expect(r.status).toBe(200);
      const text = await r.text();
      expect(text.includes('evil.example')).toBe(false);
      const doc = JSON.parse(text) as { servers?: { url: string }[] };
      expect(doc.servers?.every((s) => !/^[a-z]+:\/\//i.test(s.url) || s.url === t.deps.config.PUBLIC_URL)).toBe(true);
    });
  });
}
