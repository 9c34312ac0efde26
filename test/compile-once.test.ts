import { beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'kysely';
import { createApp } from '../src/app.ts';
import { prepare, qb } from '../src/db/compile.ts';
import { AUTH_HOLDS_SQL } from '../src/access/auth-statement.ts';
import type { Stmt } from '../src/db/plan.ts';
import { D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { menuIdsFor, userWithCodes } from './support/rbac.ts';
import { observeReads } from './support/std-modules.ts';

// Issue 24: statements of the hot routes are compiled once and only bound per request, and the
// menu tree behind getLoginUserInformation is cached per app (process / isolate) under a version
// that every menu, grant and role write bumps in its own transaction (migrations/0018).

describe('prepare: compile once, bind many', () => {
  const byId = prepare<{ id: number; status: 'enabled' | 'disabled' }>((p) => qb.selectFrom('users').select(['id', 'login_name']).where('id', '=', p.id).where('status', '=', p.status));

  test('binding gives the SQL and parameters that compiling with the values gives', () => {
    const direct = qb.selectFrom('users').select(['id', 'login_name']).where('id', '=', 7).where('status', '=', 'enabled').compile();
    const bound = byId.bind({ id: 7, status: 'enabled' });
    expect(bound.sql).toBe(direct.sql);
    expect([...bound.parameters]).toEqual([...direct.parameters]);
  });

  test('each binding is its own: values never leak from one request to the next', () => {
    const a = byId.bind({ id: 1, status: 'enabled' });
    const b = byId.bind({ id: 2, status: 'disabled' });
    expect([...a.parameters]).toEqual([1, 'enabled']);
    expect([...b.parameters]).toEqual([2, 'disabled']);
  });

  test('constants written into the statement stay, bound values fill in around them', () => {
    const mixed = prepare<{ id: number }>((p) => sql`SELECT ${'fixed'} AS f WHERE +${p.id} > ${3}`);
    expect([...mixed.bind({ id: 9 }).parameters]).toEqual(['fixed', 9, 3]);
  });

  test('a stand-in turned into text (not bound) is refused when the statement is prepared', () => {
    expect(() => prepare<{ name: string }>((p) => sql.raw(`SELECT '${p.name}'`))).toThrow(/stand-in was turned into text/);
  });
});

for (const runtime of RUNTIMES) {
  describe(`menu cache behind getLoginUserInformation (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    /** How many menu rows each request's stale-only menu read returned (0: the cache was fresh). */
    let menuRowsRead: number[] = [];
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      const isMenuRead = (s: Stmt) => /FROM menus WHERE .*cache_versions/s.test(s.sql);
      observeReads(t, (stmts, rows) => stmts.forEach((s, i) => isMenuRead(s) && menuRowsRead.push(rows[i]?.length ?? 0)));
    }, D1_START_MS);

    const info = async (token: string, app = t.app) => {
      menuRowsRead = [];
      const res = await app.request('/app/sysLoginUser/getLoginUserInformation', { headers: { authorization: `Bearer ${token}` } });
      const body = (await res.json()) as { status: number; data: { permissions: string[]; menus: { title: string; children: unknown[] }[] } };
      expect(body.status).toBe(200);
      return { ...body.data, menusRead: menuRowsRead.reduce((a, b) => a + b, 0) };
    };
    const titles = (menus: { title: string; children: unknown[] }[]): string[] =>
      menus.flatMap((m) => [m.title, ...titles(m.children as { title: string; children: unknown[] }[])]);

    test('the menus are read once, then served from the cache while nothing changed', async () => {
      const first = await info(admin);
      const second = await info(admin);
      expect(first.menusRead).toBeGreaterThan(0);
      expect(second.menusRead).toBe(0);
      expect(second.menus).toEqual(first.menus);
    });

    test('a menu edit is visible on the very next request (the version moved in the same write)', async () => {
      await info(admin);
      const row = await t.row<{ id: number; version: number }>(`SELECT id, version FROM menus WHERE type = 'directory' ORDER BY id LIMIT 1`);
      const edited = await t.call('POST', '/app/sysMenu/edit', { token: admin, body: { id: row!.id, version: row!.version, title: `Renamed ${runtime}` } });
      expect(edited.status).toBe(200);
      const after = await info(admin);
      expect(after.menusRead).toBeGreaterThan(0);
      expect(titles(after.menus)).toContain(`Renamed ${runtime}`);
    });

    test("a grant, a role's status and a role taken away apply to the user's codes on the very next request", async () => {
      const u = await userWithCodes(t, ['sys:user:page'], `cache_${runtime}`);
      expect((await info(u.token)).permissions).toEqual(['sys:user:page']);
      expect((await info(u.token)).menusRead).toBe(0); // cached
      const grant = await t.call('POST', '/app/sysRole/grantMenu', {
        token: admin,
        body: { roleId: u.roleId, menuIds: await menuIdsFor(t, ['sys:user:page', 'sys:user:detail']) },
      });
      expect(grant.status).toBe(200);
      expect((await info(u.token)).permissions).toEqual(['sys:user:detail', 'sys:user:page']);
      expect((await t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'disabled' } })).status).toBe(200);
      expect((await info(u.token)).permissions).toEqual([]);
      expect((await t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'enabled' } })).status).toBe(200);
      expect((await info(u.token)).permissions).toEqual(['sys:user:detail', 'sys:user:page']);
      expect((await t.call('POST', '/app/sysUser/grantRole', { token: admin, body: { userId: u.userId, roleIds: [] } })).status).toBe(200);
      expect((await info(u.token)).permissions).toEqual([]);
    });

    test('a write through one app (isolate) is seen by another with its own cache, on its next request', async () => {
      const other = createApp({ ...t.deps }); // another deps object: a cache of its own, as another isolate
      await info(admin, other);
      expect((await info(admin, other)).menusRead).toBe(0);
      const row = await t.row<{ id: number; version: number }>(`SELECT id, version FROM menus WHERE type = 'directory' ORDER BY id LIMIT 1`);
      const title = `Other isolate ${runtime}`;
      expect((await t.call('POST', '/app/sysMenu/edit', { token: admin, body: { id: row!.id, version: row!.version, title } })).status).toBe(200);
      expect(titles((await info(admin, other)).menus)).toContain(title);
    });

    test('without its version row (a damaged database) the cache is never trusted: every request reads the menus', async () => {
      const { n } = (await t.row<{ n: number }>(`SELECT n FROM cache_versions WHERE name = 'menus'`))!;
      await t.exec(`DELETE FROM cache_versions WHERE name = 'menus'`);
      try {
        await info(admin);
        const row = await t.row<{ id: number }>(`SELECT id FROM menus WHERE type = 'directory' ORDER BY id LIMIT 1`);
        await t.exec(`UPDATE menus SET title = ? WHERE id = ?`, `Unversioned ${runtime}`, row!.id);
        const after = await info(admin);
        expect(after.menusRead).toBeGreaterThan(0);
        expect(titles(after.menus)).toContain(`Unversioned ${runtime}`);
      } finally {
        await t.exec(`INSERT INTO cache_versions (name, n) VALUES ('menus', ?)`, n + 1000);
      }
    });

    test('a write behind the app (no route) still moves the version: the triggers keep it, not the services', async () => {
      await info(admin);
      const row = await t.row<{ id: number }>(`SELECT id FROM menus WHERE type = 'directory' ORDER BY id LIMIT 1`);
      await t.exec(`UPDATE menus SET title = ? WHERE id = ?`, `Behind ${runtime}`, row!.id);
      expect(titles((await info(admin)).menus)).toContain(`Behind ${runtime}`);
    });
  });
}

for (const runtime of RUNTIMES) {
  describe(`who holds what, cached per app under the menus version (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    /** Rows the "who holds what" statement returned, per request (0: answered from the cache). */
    let holdsRows: number[] = [];
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      observeReads(t, (stmts, rows) => stmts.forEach((s, i) => s.sql === AUTH_HOLDS_SQL && holdsRows.push(rows[i]?.length ?? 0)));
    }, D1_START_MS);

    const page = async (token: string) => {
      holdsRows = [];
      const r = await t.call('POST', '/app/sysUser/page', { token, body: {} });
      return { status: r.status, computed: holdsRows.reduce((a, b) => a + b, 0) };
    };

    test('the second request of a user for a code is answered from the cache; every change applies on the next one', async () => {
      const u = await userWithCodes(t, ['sys:user:page'], `holds_${runtime}`);
      expect(await page(u.token)).toEqual({ status: 200, computed: 1 });
      expect(await page(u.token)).toEqual({ status: 200, computed: 0 });
      const menu = (await menuIdsFor(t, ['sys:user:page']))[0]!;
      const steps: [string, () => Promise<unknown>, number][] = [
        ['the menu disabled', () => t.exec(`UPDATE menus SET status = 'disabled' WHERE id = ?`, menu), 403],
        ['the menu enabled again', () => t.exec(`UPDATE menus SET status = 'enabled' WHERE id = ?`, menu), 200],
        ['the role disabled', () => t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'disabled' } }), 403],
        ['the role enabled', () => t.call('POST', '/app/sysRole/changeStatus', { token: admin, body: { id: u.roleId, status: 'enabled' } }), 200],
        ['the menu taken from the role', () => t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: u.roleId, menuIds: [] } }), 403],
        ['the menu granted again', () => t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: u.roleId, menuIds: [menu] } }), 200],
        ['the role taken from the user', () => t.exec(`DELETE FROM user_role WHERE user_id = ?`, u.userId), 403],
        ['the superAdmin role given', () => t.exec(`INSERT INTO user_role (user_id, role_id) VALUES (?, 1)`, u.userId), 200],
        ['the superAdmin role disabled', () => t.exec(`UPDATE roles SET status = 'disabled' WHERE id = 1`), 403],
      ];
      try {
        for (const [what, change, status] of steps) {
          await change();
          expect({ what, ...(await page(u.token)) }).toEqual({ what, status, computed: 1 });
          expect({ what, ...(await page(u.token)) }).toEqual({ what, status, computed: 0 });
        }
      } finally {
        await t.exec(`UPDATE roles SET status = 'enabled' WHERE id = 1`);
        await t.exec(`DELETE FROM user_role WHERE user_id = ? AND role_id = 1`, u.userId);
      }
    });

    test('the cache never outlives a session: a logout or a disabled user is refused on the next request', async () => {
      const u = await userWithCodes(t, ['sys:user:page'], `holds_s_${runtime}`);
      expect((await page(u.token)).status).toBe(200);
      expect(await page(u.token)).toEqual({ status: 200, computed: 0 });
      await t.exec(`UPDATE users SET status = 'disabled' WHERE id = ?`, u.userId);
      expect((await page(u.token)).status).toBe(401);
    });
  });
}
