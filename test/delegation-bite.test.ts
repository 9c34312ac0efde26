import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { onceBeforeWrite } from './support/rbac.ts';
import { WORLD_PASSWORD, delegationWorld } from './support/delegation-world.ts';

/**
 * Issue 26, "tests that bite where they do not yet": each of these rules was broken on purpose
 * on main and no test failed. Each test here fails with its rule broken (see the issue note for
 * which edit each one caught), on Bun and on a real D1. And the guards of issue 26 are INSIDE the
 * write: a change landing between a request's early checks and its batch is still refused.
 * The world (organisations, fixtures): test/support/delegation-world.ts.
 */

const PASSWORD = WORLD_PASSWORD;

for (const runtime of RUNTIMES) {
  describe(`delegation rules that bite (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    let w: Awaited<ReturnType<typeof delegationWorld>>;
    let org: typeof w.org;
    const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
    const get = (path: string, token = admin) => t.call('GET', path, { token });
    const menuIds = (codes: readonly string[]) => w.menuIds(codes);
    const version = async (table: 'users' | 'roles' | 'menus', id: number) => (await t.row<{ version: number }>(`SELECT version FROM ${table} WHERE id = ?`, id))!.version;
    const role = (codes: readonly string[], dataScope = 'self', status: 'enabled' | 'disabled' = 'enabled') => w.role(codes, dataScope, { status });
    const user = (orgId: number | null, roleIds: number[] = []) => w.user(orgId, roleIds);
    const caller = (codes: readonly string[], dataScope: string, orgId: number | null, more: number[] = []) => w.caller(codes, dataScope, orgId, more);
    const refused = (path: string, body: unknown, token: string, status: number) => w.refused(path, body, token, status);
    let seq = 0;

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      w = await delegationWorld(t, admin, `bite_${runtime}`);
      org = w.org;
    }, D1_START_MS);

    test("a disabled role's scope is not in the union: page, detail and by-id writes", async () => {
      const wide = await role([], 'all', 'disabled');
      const c = await caller(['sys:user:page', 'sys:user:detail', 'sys:user:edit', 'sys:user:changeStatus', 'sys:user:resetPassword'], 'self', org.sales, [wide]);
      const target = await user(org.support);
      const listed = async () => (await post('/app/sysUser/page', { pageSize: 100 }, c.token)).data.records.map((r: { id: number }) => r.id);
      expect(await listed()).toEqual([c.id]);
      expect((await get(`/app/sysUser/detail?id=${target.id}`, c.token)).status).toBe(404);
      await refused('/app/sysUser/changeStatus', { id: target.id, status: 'disabled' }, c.token, 404);
      await refused('/app/sysUser/edit', { id: target.id, version: await version('users', target.id), nickName: 'x' }, c.token, 404);
      await refused('/app/sysUser/resetPassword', { id: target.id, newPassword: 'Other-Passw0rd-5' }, c.token, 404);
      // Not vacuous: enabled, the same role does widen the scope.
      expect((await post('/app/sysRole/changeStatus', { id: wide, status: 'enabled' })).status).toBe(200);
      expect(await listed()).toContain(target.id);
      expect((await get(`/app/sysUser/detail?id=${target.id}`, c.token)).status).toBe(200);
    });

    test('a disabled menu is not held: a caller whose copy of a code is disabled cannot act on a user who holds it', async () => {
      const [clear] = await menuIds(['sys:loginLog:clear']);
      const c = await caller(['sys:user:resetPassword', 'sys:loginLog:clear'], 'all', org.sales);
      const target = await user(org.sales1, [await role(['sys:loginLog:clear'])]);
      const off = await post('/app/sysMenu/edit', { id: clear, version: await version('menus', clear!), status: 'disabled' });
      expect(off.status).toBe(200);
      try {
        await refused('/app/sysUser/resetPassword', { id: target.id, newPassword: 'Other-Passw0rd-5' }, c.token, 403);
      } finally {
        expect((await post('/app/sysMenu/edit', { id: clear, version: await version('menus', clear!), status: 'enabled' })).status).toBe(200);
      }
      // Not vacuous: with the menu enabled she holds the code.
      expect((await post('/app/sysUser/resetPassword', { id: target.id, newPassword: 'Other-Passw0rd-5' }, c.token)).status).toBe(200);
    });

    test('a caller with scope org cannot grant orgAndBelow (or any wider kind) to a role', async () => {
      const c = await caller(['sys:role:grantDataScope', 'sys:role:add', 'sys:role:edit'], 'org', org.sales);
      const target = await role([]);
      for (const [dataScope, scopeOrgIds] of [['orgAndBelow', undefined], ['all', undefined], ['custom', [org.sales]], ['custom', [org.support]]] as const) {
        await refused('/app/sysRole/grantDataScope', { roleId: target, dataScope, scopeOrgIds }, c.token, 403);
        await refused('/app/sysRole/edit', { id: target, version: await version('roles', target), dataScope, scopeOrgIds }, c.token, 403);
        await refused('/app/sysRole/add', { name: 'wide', code: `bite_wide_${++seq}`, dataScope, scopeOrgIds }, c.token, 403);
      }
      expect((await post('/app/sysRole/grantDataScope', { roleId: target, dataScope: 'org' }, c.token)).status).toBe(200);
      expect((await post('/app/sysRole/grantDataScope', { roleId: target, dataScope: 'self' }, c.token)).status).toBe(200);
    });

    test('rows with no known user are neither visible by id nor deletable under a scope narrower than all', async () => {
      expect((await t.call('POST', '/auth/login', { body: { loginName: `bite_ghost_${runtime}`, password: 'Wrong-Passw0rd-1' } })).status).toBe(401);
      const ghost = (await t.row<{ id: number; user_id: number | null }>('SELECT id, user_id FROM login_log WHERE login_name = ?', `bite_ghost_${runtime}`))!;
      expect(ghost.user_id).toBeNull();
      // A scheduled backup's op-log row names no operator.
      await t.exec(
        `INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, trace_id, created_at)
         VALUES ('sysBackup', 'create', 'SCHEDULE', '/app/sysBackup/create', NULL, NULL, '', 'scheduler', '{}', 200, 'bite', ?)`,
        new Date(t.clock.now()).toISOString(),
      );
      const scheduled = (await t.row<{ id: number }>("SELECT id FROM op_log WHERE trace_id = 'bite'"))!.id;
      const codes = ['sys:loginLog:page', 'sys:loginLog:delete', 'sys:opLog:page', 'sys:opLog:detail', 'sys:opLog:delete'];
      for (const scope of ['orgAndBelow', 'org', 'self', 'custom'] as const) {
        const c = await caller(codes, scope, org.sales);
        expect((await get(`/app/sysOpLog/detail?id=${scheduled}`, c.token)).status).toBe(404);
        expect((await post('/app/sysOpLog/delete', { ids: [scheduled] }, c.token)).data).toEqual({ deleted: 0 });
        expect((await post('/app/sysLoginLog/delete', { ids: [ghost.id] }, c.token)).data).toEqual({ deleted: 0 });
        const pages = [(await post('/app/sysOpLog/page', { pageSize: 100 }, c.token)).data.records, (await post('/app/sysLoginLog/page', { pageSize: 100 }, c.token)).data.records];
        expect(pages[0].some((r: { id: number }) => r.id === scheduled)).toBe(false);
        expect(pages[1].some((r: { id: number }) => r.id === ghost.id)).toBe(false);
      }
      expect(await t.row('SELECT id FROM op_log WHERE id = ?', scheduled)).not.toBeNull();
      expect(await t.row('SELECT id FROM login_log WHERE id = ?', ghost.id)).not.toBeNull();
      // Under `all` (not a super admin): visible and deletable.
      const all = await caller(codes, 'all', org.sales);
      expect((await get(`/app/sysOpLog/detail?id=${scheduled}`, all.token)).status).toBe(200);
      expect((await post('/app/sysOpLog/delete', { ids: [scheduled] }, all.token)).data).toEqual({ deleted: 1 });
      expect((await post('/app/sysLoginLog/delete', { ids: [ghost.id] }, all.token)).data).toEqual({ deleted: 1 });
    });

    test('clear by a caller whose scope is all (not a super admin) removes every row', async () => {
      const someone = await user(org.support);
      expect((await t.call('POST', '/auth/login', { body: { loginName: someone.loginName, password: 'Wrong-Passw0rd-1' } })).status).toBe(401);
      expect((await t.call('POST', '/auth/login', { body: { loginName: `bite_nobody_${runtime}`, password: 'Wrong-Passw0rd-1' } })).status).toBe(401);
      const c = await caller(['sys:loginLog:clear', 'sys:opLog:clear'], 'all', null);
      const kinds = async (table: 'login_log' | 'op_log', col: string) =>
        (await t.row<{ known: number; unknown: number }>(`SELECT sum(${col} IS NOT NULL) AS known, sum(${col} IS NULL) AS unknown FROM ${table}`))!;
      const before = await kinds('login_log', 'user_id');
      expect(before.known).toBeGreaterThan(0);
      expect(before.unknown).toBeGreaterThan(0);
      expect((await kinds('op_log', 'operator_id')).known).toBeGreaterThan(0);
      const cleared = await post('/app/sysLoginLog/clear', {}, c.token);
      expect(cleared.status).toBe(200);
      expect(await t.row('SELECT count(*) AS n FROM login_log')).toEqual({ n: 0 });
      expect((await post('/app/sysOpLog/clear', {}, c.token)).status).toBe(200);
      // Only the clear's own row, written after it, is left.
      expect(await t.rows('SELECT operator_id, action FROM op_log')).toEqual([{ operator_id: c.id, action: 'clear' }]);
    });

    describe('the guards are inside the write: a change between the early checks and the batch is refused', () => {
      test('a user outside the scope gets the role just before grantMenu writes → 403, menus unchanged', async () => {
        const m = await caller(['sys:role:grantMenu', 'sys:user:page'], 'orgAndBelow', org.sales);
        const target = await role(['sys:user:page']);
        const outsider = await user(org.support);
        const before = await t.rows('SELECT menu_id FROM role_menu WHERE role_id = ? ORDER BY menu_id', target);
        const race = onceBeforeWrite(t, () => t.exec('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)', outsider.id, target));
        try {
          const r = await post('/app/sysRole/grantMenu', { roleId: target, menuIds: await menuIds(['sys:user:page', 'sys:role:grantMenu']) }, m.token);
          expect(race.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*held by a user outside your data scope/);
        } finally {
          race.restore();
        }
        expect(await t.rows('SELECT menu_id FROM role_menu WHERE role_id = ? ORDER BY menu_id', target)).toEqual(before);
      });

      test("the menu is disabled just before a holder's edit writes → 403, the menu unchanged", async () => {
        const m = await caller(['sys:menu:edit', 'sys:opLog:clear'], 'all', org.sales);
        const [button] = await menuIds(['sys:opLog:clear']);
        const v = await version('menus', button!);
        const race = onceBeforeWrite(t, () => t.exec("UPDATE menus SET status = 'disabled' WHERE id = ?", button!));
        try {
          const r = await post('/app/sysMenu/edit', { id: button, version: v, title: 'mine' }, m.token);
          expect(race.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*permission code that you do not hold/);
        } finally {
          race.restore();
          await t.exec("UPDATE menus SET status = 'enabled' WHERE id = ?", button!);
        }
        expect((await t.row('SELECT title FROM menus WHERE id = ?', button!))!.title).not.toBe('mine');
      });

      test('the caller loses sys:user:grantRole just before an add with roleIds writes → 403, no user', async () => {
        const grantRole = await role(['sys:user:grantRole']);
        const m = await caller(['sys:user:add'], 'all', org.sales, [grantRole]);
        const plain = await role([]);
        const name = `bite_added_${++seq}`;
        const race = onceBeforeWrite(t, () => t.exec("UPDATE roles SET status = 'disabled' WHERE id = ?", grantRole));
        try {
          const r = await post('/app/sysUser/add', { loginName: name, password: PASSWORD, roleIds: [plain] }, m.token);
          expect(race.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*sys:user:grantRole/);
        } finally {
          race.restore();
        }
        expect(await t.row('SELECT id FROM users WHERE login_name = ?', name)).toBeNull();
      });

      test('a role of hers is revoked just before her re-sent set writes → 403, she does not get it back', async () => {
        const extra = await role([]);
        const m = await caller(['sys:user:grantRole'], 'all', org.sales, [extra]);
        const race = onceBeforeWrite(t, () => t.exec('DELETE FROM user_role WHERE user_id = ? AND role_id = ?', m.id, extra));
        try {
          const r = await post('/app/sysUser/grantRole', { userId: m.id, roleIds: [m.roleId, extra] }, m.token);
          expect(race.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*give yourself a role/);
        } finally {
          race.restore();
        }
        expect((await t.rows<{ role_id: number }>('SELECT role_id FROM user_role WHERE user_id = ? ORDER BY role_id', m.id)).map((r) => r.role_id)).toEqual([m.roleId]);
      });

      test('the caller loses her scope all just before grantDataScope writes → 403, the scope unchanged', async () => {
        const wide = await role([], 'all');
        const m = await caller(['sys:role:grantDataScope'], 'self', org.sales, [wide]);
        const target = await role([]);
        const race = onceBeforeWrite(t, () => t.exec("UPDATE roles SET status = 'disabled' WHERE id = ?", wide));
        try {
          const r = await post('/app/sysRole/grantDataScope', { roleId: target, dataScope: 'all' }, m.token);
          expect(race.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 /);
        } finally {
          race.restore();
        }
        expect((await t.row('SELECT data_scope FROM roles WHERE id = ?', target))!.data_scope).toBe('self');
      });
    });
  });
}
