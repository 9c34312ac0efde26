import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, RUNTIMES, makeTestApp, runnerAs, type AnyTestApp } from './support/app.ts';
import { addMenu, deleteMenus, editMenu } from '../src/modules/menus/menus.service.ts';
import { BAD_IDS, userWithCodes } from './support/rbac-fixture.ts';
import { expectGuarded, type GuardedOp } from './support/scenario.ts';

let t: AnyTestApp;
let admin: string;
/** A user holding no code at all, and one holding every sys:menu code. */
let nobody: string;
let granted: string;

const MENU_CODES = ['sys:menu:tree', 'sys:menu:detail', 'sys:menu:add', 'sys:menu:edit', 'sys:menu:delete'];
const MENU_FIELDS = [
  'id', 'parentId', 'title', 'type', 'path', 'component', 'icon', 'permission', 'sort', 'hidden', 'name', 'keepAlive', 'status', 'version', 'createdAt', 'updatedAt',
].sort();

// One body per runtime (bun:sqlite, and a real D1 in workerd), the way Kysely runs its tests per dialect.
for (const runtime of RUNTIMES) {
  describe(runtime, () => {
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      nobody = (await userWithCodes(t, [])).token;
      granted = (await userWithCodes(t, MENU_CODES)).token;
    }, D1_START_MS);
    suite();
  });
}

const add = (body: Record<string, unknown>, token = admin) => t.call('POST', '/app/sysMenu/add', { token, body });
const edit = (body: Record<string, unknown>, token = admin) => t.call('POST', '/app/sysMenu/edit', { token, body });
const del = (ids: unknown, token = admin) => t.call('POST', '/app/sysMenu/delete', { token, body: { ids } });
const row = (id: number) => t.row('SELECT * FROM menus WHERE id = ?', id);
async function made(body: Record<string, unknown>) {
  const r = await add(body);
  expect(r.status).toBe(200);
  return r.data as { id: number; version: number; parentId: number };
}

function suite() {
  describe('auth table', () => {
    const ops: GuardedOp[] = [
      { code: 'sys:menu:tree', method: 'GET', path: '/app/sysMenu/tree' },
      { code: 'sys:menu:detail', method: 'GET', path: '/app/sysMenu/detail', request: () => ({ query: 'id=1' }) },
      { code: 'sys:menu:add', method: 'POST', path: '/app/sysMenu/add', request: () => ({ body: { title: 'Auth probe', type: 'directory' } }) },
      {
        code: 'sys:menu:edit',
        method: 'POST',
        path: '/app/sysMenu/edit',
        request: async () => {
          const m = await made({ title: 'Edit probe', type: 'directory' });
          return { body: { id: m.id, version: m.version, title: 'Edited' } };
        },
      },
      {
        code: 'sys:menu:delete',
        method: 'POST',
        path: '/app/sysMenu/delete',
        request: async () => ({ body: { ids: [(await made({ title: 'Delete probe', type: 'directory' })).id] } }),
      },
    ];
    for (const op of ops) {
      test(`${op.code.split(':')[2]}: no token 401, no code 403 (nothing changes), granted 200`, async () => {
        await expectGuarded(t, op, { refused: nobody, granted }, ['menus', 'role_menu']);
      });
    }

    test('a refused write is still recorded in the op log; an anonymous one is not', async () => {
      const before = await t.count('op_log');
      await t.call('POST', '/app/sysMenu/add', { body: { title: 'x', type: 'directory' } });
      expect(await t.count('op_log')).toBe(before);
      await add({ title: 'x', type: 'directory' }, nobody);
      const last = await t.row('SELECT module, action, status FROM op_log ORDER BY id DESC LIMIT 1');
      expect(last).toEqual({ module: 'sysMenu', action: 'add', status: 403 });
    });
  });

  describe('tree and detail', () => {
    test('tree holds every menu once, nested by parentId and ordered by sort', async () => {
      const r = await t.call('GET', '/app/sysMenu/tree', { token: admin });
      expect(r.status).toBe(200);
      const seen: number[] = [];
      const walk = (nodes: any[], parentId: number) => {
        let lastSort = -Infinity;
        for (const n of nodes) {
          expect(Object.keys(n).sort()).toEqual([...MENU_FIELDS, 'children'].sort());
          expect(n.parentId).toBe(parentId);
          expect(n.sort).toBeGreaterThanOrEqual(lastSort);
          lastSort = n.sort;
          seen.push(n.id);
          walk(n.children, n.id);
        }
      };
      walk(r.data, 0);
      expect(seen.length).toBe(await t.count('menus'));
      const menus = r.data.find((n: any) => n.id === 12).children.find((n: any) => n.id === 23);
      expect(menus.children.map((n: any) => n.permission)).toEqual(['sys:menu:tree', 'sys:menu:detail', 'sys:menu:add', 'sys:menu:edit', 'sys:menu:delete']);
      expect(menus.children[0]).toMatchObject({ type: 'button', hidden: false, status: 'enabled', children: [] });
    });

    test('detail returns the fields of the contract; 404 for an unknown id', async () => {
      const r = await t.call('GET', '/app/sysMenu/detail?id=23', { token: admin });
      expect(r.status).toBe(200);
      expect(Object.keys(r.data).sort()).toEqual(MENU_FIELDS);
      expect(r.data).toMatchObject({ id: 23, parentId: 12, type: 'menu', path: '/permission/menu', component: 'permission/MenuList' });
      const missing = await t.call('GET', '/app/sysMenu/detail?id=999999', { token: admin });
      expect(missing.status).toBe(404);
      expect(missing.json.data).toBeNull();
    });

    for (const q of ['', '?id=', '?id=abc', '?id=-1', '?id=0', '?id=1.5', '?id=1%20OR%201=1', '?id=99999999999999999999', '?id=1e3', '?id=1&x=2']) {
      test(`detail refuses ${q || 'a missing id'} with 400`, async () => {
        const r = await t.call('GET', `/app/sysMenu/detail${q}`, { token: admin });
        expect(r.status).toBe(400);
        expect(r.json.msg).toMatch(/id|x/);
      });
    }
  });

  describe('add', () => {
    test('applies defaults, trims, stores empty strings as null, returns version 1', async () => {
      const r = await add({ title: '  Reports  ', type: 'menu', parentId: 29, path: '/system/reports', component: '', icon: 'chart' });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({
        parentId: 29, title: 'Reports', type: 'menu', path: '/system/reports', component: null, icon: 'chart',
        permission: null, sort: 0, hidden: false, status: 'enabled', version: 1,
      });
      expect(await row(r.data.id)).toMatchObject({ title: 'Reports', hidden: 0 });
      const button = await add({ title: 'Export', type: 'button', parentId: r.data.id, permission: 'sys:report:export', sort: 3, hidden: true });
      expect(button.status).toBe(200);
      expect(button.data).toMatchObject({ parentId: r.data.id, permission: 'sys:report:export', sort: 3, hidden: true });
    });

    const parentButton = 24; // "Menus: tree"
    const refused: [string, Record<string, unknown>, RegExp][] = [
      ['a button without a permission code', { title: 'B', type: 'button', parentId: 23 }, /permission: is required for a button/],
      ['a button with an empty permission', { title: 'B', type: 'button', parentId: 23, permission: '' }, /permission/],
      ['a missing parent', { title: 'M', type: 'menu', parentId: 987654 }, /parentId: menu 987654 does not exist/],
      ['a button as parent', { title: 'M', type: 'menu', parentId: parentButton }, /parentId: a button cannot have children/],
      ['a negative parentId', { title: 'M', type: 'menu', parentId: -1 }, /parentId/],
      ['parentId as a string', { title: 'M', type: 'menu', parentId: '1' }, /parentId/],
      ['a two-part code', { title: 'B', type: 'button', parentId: 23, permission: 'sys:menu' }, /permission: must look like/],
      ['a four-part code', { title: 'B', type: 'button', parentId: 23, permission: 'sys:menu:add:x' }, /permission/],
      ['a code with an injection', { title: 'B', type: 'button', parentId: 23, permission: "sys:menu:add' OR '1'='1" }, /permission/],
      ['a code starting upper-case', { title: 'B', type: 'button', parentId: 23, permission: 'Sys:menu:add' }, /permission/],
      ['an unknown type', { title: 'M', type: 'page' }, /type/],
      ['an empty title', { title: '   ', type: 'menu' }, /title/],
      ['a missing title', { type: 'menu' }, /title/],
      ['a 65-character title', { title: 'x'.repeat(65), type: 'menu' }, /title/],
      ['hidden as a string', { title: 'M', type: 'menu', hidden: 'true' }, /hidden/],
      ['a fractional sort', { title: 'M', type: 'menu', sort: 1.5 }, /sort/],
      ['an unknown status', { title: 'M', type: 'menu', status: 'on' }, /status/],
      ['a client-chosen id', { id: 5000, title: 'M', type: 'menu' }, /unknown field/],
      ['a client-chosen version', { version: 7, title: 'M', type: 'menu' }, /unknown field/],
      ['a createdAt', { createdAt: '2020-01-01T00:00:00.000Z', title: 'M', type: 'menu' }, /unknown field/],
      ['a children array', { children: [], title: 'M', type: 'menu' }, /unknown field/],
    ];
    for (const [name, body, msg] of refused) {
      test(`refuses ${name} with 400 and writes nothing`, async () => {
        const before = await t.count('menus');
        const r = await add(body);
        expect(r.status).toBe(400);
        expect(r.json.msg).toMatch(msg);
        expect(await t.count('menus')).toBe(before);
      });
    }

    test('a directory or menu may carry a code; a missing body is 400', async () => {
      expect((await add({ title: 'D', type: 'directory', permission: 'sys:report:view' })).status).toBe(200);
      const r = await t.call('POST', '/app/sysMenu/add', { token: admin });
      expect(r.status).toBe(400);
      const broken = await t.call('POST', '/app/sysMenu/add', { token: admin, body: '{"title":' });
      expect(broken.status).toBe(400);
    });
  });

  describe('edit', () => {
    test('changes only the fields sent, bumps version, refuses the stale version with 409', async () => {
      const m = await made({ title: 'Before', type: 'menu', path: '/before', icon: 'i' });
      const r = await edit({ id: m.id, version: 1, title: 'After', path: null });
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ id: m.id, title: 'After', path: null, icon: 'i', type: 'menu', version: 2 });
      const stale = await edit({ id: m.id, version: 1, title: 'Lost update' });
      expect(stale.status).toBe(409);
      expect(stale.json.msg).toMatch(/version/);
      expect(await row(m.id)).toMatchObject({ title: 'After', version: 2 });
      const log = (await t.row('SELECT status, error_msg FROM op_log ORDER BY id DESC LIMIT 1'))!;
      expect(log.status).toBe(409);
      expect(log.error_msg).toMatch(/version/);
    });

    test('refuses a future version too, and an unknown id with 404', async () => {
      const m = await made({ title: 'V', type: 'menu' });
      expect((await edit({ id: m.id, version: 2, title: 'x' })).status).toBe(409);
      expect((await edit({ id: 987654, version: 1, title: 'x' })).status).toBe(404);
      expect(await row(m.id)).toMatchObject({ title: 'V', version: 1 });
    });

    test('a menu can never become its own parent or ancestor', async () => {
      const a = await made({ title: 'A', type: 'directory' });
      const b = await made({ title: 'B', type: 'directory', parentId: a.id });
      const c = await made({ title: 'C', type: 'menu', parentId: b.id });
      const snapshot = () => t.rows('SELECT id, parent_id, version FROM menus WHERE id IN (?, ?, ?) ORDER BY id', a.id, b.id, c.id);
      const before = await snapshot();
      const self = await edit({ id: a.id, version: 1, parentId: a.id });
      expect(self.status).toBe(400);
      expect(self.json.msg).toMatch(/parentId: a menu cannot be its own parent/);
      for (const target of [b.id, c.id]) {
        const r = await edit({ id: a.id, version: 1, parentId: target });
        expect(r.status).toBe(400);
        expect(r.json.msg).toMatch(/parentId: .*descendants/);
      }
      expect(await snapshot()).toEqual(before);
      // Moving down a level elsewhere and back to the root are fine.
      expect((await edit({ id: c.id, version: 1, parentId: a.id })).status).toBe(200);
      expect((await edit({ id: b.id, version: 1, parentId: 0 })).status).toBe(200);
    });

    test('two concurrent moves cannot build a cycle together', async () => {
      const x = await made({ title: 'X', type: 'directory' });
      const y = await made({ title: 'Y', type: 'directory' });
      const results = await Promise.all([edit({ id: x.id, version: 1, parentId: y.id }), edit({ id: y.id, version: 1, parentId: x.id })]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
      const parents = await t.rows<{ parent_id: number }>('SELECT parent_id FROM menus WHERE id IN (?, ?)', x.id, y.id);
      expect(parents.filter((p) => p.parent_id === 0).length).toBe(1);
    });

    test('parent rules: must exist, must not be a button; a menu with children cannot become a button', async () => {
      const m = await made({ title: 'P', type: 'menu' });
      const child = await made({ title: 'Ch', type: 'button', parentId: m.id, permission: 'sys:p:x' });
      expect((await edit({ id: m.id, version: 1, parentId: 987654 })).json.msg).toMatch(/does not exist/);
      expect((await edit({ id: m.id, version: 1, parentId: child.id })).status).toBe(400);
      const toButton = await edit({ id: m.id, version: 1, type: 'button', permission: 'sys:p:y' });
      expect(toButton.status).toBe(400);
      expect(toButton.json.msg).toMatch(/type: a menu with children cannot become a button/);
      const noCode = await edit({ id: child.id, version: 1, permission: null });
      expect(noCode.status).toBe(400);
      expect(noCode.json.msg).toMatch(/permission: is required for a button/);
      expect(await row(m.id)).toMatchObject({ type: 'menu', parent_id: 0, version: 1 });
      expect(await row(child.id)).toMatchObject({ permission: 'sys:p:x', version: 1 });
    });

    const badEdits: [string, Record<string, unknown>][] = [
      ['a missing version', { id: 1, title: 'x' }],
      ['version as a string', { id: 1, version: '1', title: 'x' }],
      ['version 0', { id: 1, version: 0 }],
      ['a missing id', { version: 1, title: 'x' }],
      ['id as a string', { id: '1', version: 1 }],
      ['id as an injection', { id: '1 OR 1=1', version: 1 }],
      ['a negative id', { id: -1, version: 1 }],
      ['an unsafe id', { id: 2 ** 53, version: 1 }],
      ['an id array', { id: [1], version: 1 }],
      ['a createdAt', { id: 1, version: 1, createdAt: '2020-01-01T00:00:00.000Z' }],
      ['an updatedAt', { id: 1, version: 1, updatedAt: '2020-01-01T00:00:00.000Z' }],
      ['an unknown field', { id: 1, version: 1, owner: 'me' }],
      ['a bad permission', { id: 1, version: 1, permission: 'drop table' }],
    ];
    for (const [name, body] of badEdits) {
      test(`refuses ${name} with 400 and changes nothing`, async () => {
        const before = await row(1);
        const r = await edit(body);
        expect(r.status).toBe(400);
        expect(await row(1)).toEqual(before);
      });
    }
  });

  describe('delete', () => {
    test('refuses a menu with children (400) unless they go in the same request', async () => {
      const p = await made({ title: 'Parent', type: 'menu' });
      const c1 = await made({ title: 'c1', type: 'button', parentId: p.id, permission: 'sys:x:a' });
      const before = await t.count('menus');
      const r = await del([p.id]);
      expect(r.status).toBe(400);
      expect(r.json.msg).toMatch(new RegExp(`menu ${p.id} has children`));
      expect(await t.count('menus')).toBe(before);
      expect((await del([c1.id, p.id])).status).toBe(200);
      expect(await t.count('menus')).toBe(before - 2);
    });

    test('removes the grants with the menu, atomically; an unknown id refuses the whole batch with 404', async () => {
      const m = await made({ title: 'Granted', type: 'button', parentId: 23, permission: 'sys:x:granted' });
      const other = await made({ title: 'Kept', type: 'directory' });
      await t.exec('INSERT INTO role_menu (role_id, menu_id) VALUES (1, ?)', m.id);
      const grants = await t.count('role_menu');
      const partial = await del([m.id, other.id, 987654]);
      expect(partial.status).toBe(404);
      expect(partial.json.msg).toMatch(/987654/);
      expect(await row(m.id)).not.toBeNull();
      expect(await row(other.id)).not.toBeNull();
      expect(await t.count('role_menu')).toBe(grants);
      expect((await del([m.id, m.id])).status).toBe(200);
      expect(await row(m.id)).toBeNull();
      expect(await t.count('role_menu')).toBe(grants - 1);
    });

    for (const [name, ids] of BAD_IDS) {
      test(`refuses ids as ${name} with 400 and deletes nothing`, async () => {
        const before = await t.count('menus');
        const r = await del(ids);
        expect(r.status).toBe(400);
        expect(r.json.msg).toMatch(/^ids/);
        expect(await t.count('menus')).toBe(before);
      });
    }

    test('refuses 1e309 (not a finite number) and an unknown field', async () => {
      const before = await t.count('menus');
      expect((await t.call('POST', '/app/sysMenu/delete', { token: admin, body: '{"ids":[1e309]}' })).status).toBe(400);
      expect((await t.call('POST', '/app/sysMenu/delete', { token: admin, body: { ids: [1], cascade: true } })).status).toBe(400);
      expect(await t.count('menus')).toBe(before);
    });
  });

  describe('a permission change applies on the next request', () => {
    test('disabling, re-enabling and deleting the button that carries a code', async () => {
      const u = await userWithCodes(t, ['sys:menu:tree']);
      const tree = () => t.call('GET', '/app/sysMenu/tree', { token: u.token });
      expect((await tree()).status).toBe(200);
      const v = (await row(24))!.version as number;
      expect((await edit({ id: 24, version: v, status: 'disabled' })).status).toBe(200);
      expect((await tree()).status).toBe(403);
      expect((await edit({ id: 24, version: v + 1, status: 'enabled' })).status).toBe(200);
      expect((await tree()).status).toBe(200);
      expect((await del([24])).status).toBe(200);
      expect((await tree()).status).toBe(403);
      // The super admin passes without any menu.
      expect((await t.call('GET', '/app/sysMenu/tree', { token: admin })).status).toBe(200);
    });
  });

  describe('op log', () => {
    test('every write records one row with the outcome', async () => {
      const before = await t.count('op_log');
      const m = await made({ title: 'Logged', type: 'directory' });
      await edit({ id: m.id, version: 1, title: 'Logged 2' });
      await del([m.id]);
      await del([m.id]);
      const rows = await t.rows('SELECT module, action, status, operator_name FROM op_log WHERE id > (SELECT max(id) - 4 FROM op_log) ORDER BY id');
      expect(await t.count('op_log')).toBe(before + 4);
      expect(rows).toEqual([
        { module: 'sysMenu', action: 'add', status: 200, operator_name: 'admin' },
        { module: 'sysMenu', action: 'edit', status: 200, operator_name: 'admin' },
        { module: 'sysMenu', action: 'delete', status: 200, operator_name: 'admin' },
        { module: 'sysMenu', action: 'delete', status: 404, operator_name: 'admin' },
      ]);
      await t.call('GET', '/app/sysMenu/tree', { token: admin });
      expect(await t.count('op_log')).toBe(before + 4);
    });
  });

  async function statusOf(p: Promise<unknown>) {
    try {
      await p;
      return 200;
    } catch (e) {
      return (e as { status: number }).status;
    }
  }

  describe('guards inside the writes (a concurrent change lands between check and write)', () => {
    /** The services take the caller; these calls act as the bootstrapped super admin. */
    const superCaller = { userId: 1, loginName: 'admin', sessionId: 'test', isSuperAdmin: true };
    test('edit: a move that would close a cycle is refused', async () => {
      const x = await made({ title: 'RX', type: 'directory' });
      const y = await made({ title: 'RY', type: 'directory' });
      const deps = racing(/^update "menus"/, () => t.exec('UPDATE menus SET parent_id = ?, version = version + 1 WHERE id = ?', x.id, y.id));
      expect(await statusOf(editMenu(deps, runnerAs(deps, superCaller), { id: x.id, version: 1, parentId: y.id }))).toBe(400);
      expect(await row(x.id)).toMatchObject({ parent_id: 0, version: 1 });
    });

    test('add: a parent that became a button meanwhile gets no child', async () => {
      const p = await made({ title: 'RP', type: 'menu' });
      const before = await t.count('menus');
      const deps = racing(/^INSERT INTO menus/, () => t.exec("UPDATE menus SET type = 'button', permission = 'sys:r:x' WHERE id = ?", p.id));
      expect(await statusOf(addMenu(deps, runnerAs(deps, superCaller), { title: 'child', type: 'menu', parentId: p.id }))).toBe(400);
      expect(await t.count('menus')).toBe(before);
    });

    test('delete: a child added meanwhile keeps the parent and its grants', async () => {
      const p = await made({ title: 'RD', type: 'menu' });
      await t.exec('INSERT INTO role_menu (role_id, menu_id) VALUES (1, ?)', p.id);
      const deps = racing(/^delete from/, () =>
        t.exec("INSERT INTO menus (parent_id, title, type, permission) VALUES (?, 'late child', 'button', 'sys:r:y')", p.id),
      );
      expect(await statusOf(deleteMenus(runnerAs(deps, superCaller), [p.id]))).toBe(400);
      expect(await row(p.id)).not.toBeNull();
      expect(await t.row('SELECT count(*) AS n FROM role_menu WHERE menu_id = ?', p.id)).toEqual({ n: 1 });
    });
  });

  describe('route names and keepAlive for SPA routers (migration 0008)', () => {
    test('seeded directories and menus carry stable names; buttons none', async () => {
      const r = await t.call('GET', '/app/sysMenu/tree', { token: admin });
      const names: Record<string, string | null> = {};
      const walk = (nodes: any[]) => nodes.forEach((n) => ((names[n.title] = n.name), walk(n.children)));
      walk(r.data);
      expect(names).toMatchObject({ 'User management': 'UserManagement', Users: 'Users', Roles: 'Roles', 'Operation log': 'OperationLog', 'Users: add': null });
      const info = await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: admin });
      const userDir = info.data.menus.find((m: any) => m.id === 1);
      expect(userDir).toMatchObject({ name: 'UserManagement', keepAlive: false });
      expect(userDir.children[0]).toMatchObject({ name: 'Users', title: 'Users', path: '/user/list' });
    });

    test('add and edit take a name and keepAlive; a title change keeps the name', async () => {
      const a = await add({ title: 'Reports', type: 'menu', path: '/reports', name: 'Reports', keepAlive: true });
      expect(a.status).toBe(200);
      expect(a.data).toMatchObject({ name: 'Reports', keepAlive: true });
      const e = await edit({ id: a.data.id, version: a.data.version, title: 'Monthly reports' });
      expect(e.data).toMatchObject({ name: 'Reports', keepAlive: true, title: 'Monthly reports' });
      expect(await row(a.data.id)).toMatchObject({ name: 'Reports', keep_alive: 1 });
    });

    test('without a name a menu is called Menu<id>; that name is reserved for it', async () => {
      const a = await add({ title: 'Unnamed', type: 'menu', path: '/unnamed' });
      expect(a.data.name).toBe(`Menu${a.data.id}`);
      expect((await row(a.data.id))!.name).toBeNull();
      const other = await add({ title: 'Thief', type: 'menu', name: `menu${a.data.id}` });
      expect(other.status).toBe(400);
      expect(other.json.msg).toContain('name:');
      const own = await edit({ id: a.data.id, version: a.data.version, name: `Menu${a.data.id}` });
      expect(own.status).toBe(200);
    });

    test('names are unique case-insensitively: 409 naming the field, nothing written', async () => {
      const before = await t.count('menus');
      const dup = await add({ title: 'Users again', type: 'menu', name: 'USERS' });
      expect(dup.status).toBe(409);
      expect(dup.json.msg).toContain("name: 'USERS'");
      expect(await t.count('menus')).toBe(before);
      const m = await add({ title: 'Spare', type: 'menu', name: 'Spare' });
      const clash = await edit({ id: m.data.id, version: m.data.version, name: 'roles' });
      expect(clash.status).toBe(409);
      expect((await row(m.data.id))!.name).toBe('Spare');
    });

    test('a name must suit a router: letters, digits, _ and -', async () => {
      for (const name of ['1abc', 'has space', 'x'.repeat(65), 'a/b']) {
        const r = await add({ title: 'Bad', type: 'menu', name });
        expect({ name, status: r.status }).toEqual({ name, status: 400 });
      }
    });
  });
}

/**
 * Deps whose db runs `act` (another request committing) right when the service compiles its write,
 * i.e. after its own checks passed: only the guards inside the write can still refuse it. On Bun
 * `act` writes at once (bun:sqlite is synchronous); on D1 it is awaited just before that write's
 * statement (or batch) reaches D1.
 */
/**
 * The app's deps with a concurrent change (`act`) landing right before the first write batch holding
 * a statement whose SQL matches `match`: between the service's checks and its write.
 */
function racing(match: RegExp, act: () => Promise<void>) {
  let armed = true;
  const atomic = t.deps.atomic;
  return {
    ...t.deps,
    atomic: async (batch: Parameters<typeof atomic>[0]) => {
      if (armed && batch.some((q) => match.test(q.sql.trimStart()))) {
        armed = false;
        await act();
      }
      return atomic(batch);
    },
  };
}
