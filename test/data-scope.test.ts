import { beforeAll, describe, expect, test } from 'bun:test';
import type { PermissionCode } from '../src/core/permissions.ts';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { onceBeforeWrite } from './support/rbac.ts';

/**
 * Data scope and containment on users and roles, on Bun and on a real D1 (contract: "Delegation:
 * who may act on whom", "Organisations and data scope"). Tables of (caller scope × target ×
 * operation → status), each refusal checked to have changed nothing.
 *
 * The tree:  co ─┬─ a ── a1
 *                └─ b
 * Targets: uA1 (in a1), uA (in a), uB (in b), uNone (no organisation).
 */

const USER_CODES: PermissionCode[] = [
  'sys:user:page', 'sys:user:detail', 'sys:user:add', 'sys:user:edit', 'sys:user:delete',
  'sys:user:changeStatus', 'sys:user:resetPassword', 'sys:user:grantRole', 'sys:user:ownRole',
];
const ROLE_CODES: PermissionCode[] = [
  'sys:role:page', 'sys:role:detail', 'sys:role:add', 'sys:role:edit', 'sys:role:delete', 'sys:role:changeStatus',
  'sys:role:grantMenu', 'sys:role:ownMenu', 'sys:role:grantDataScope',
];
const PASSWORD = 'Valid-Passw0rd-9';
const TABLES = ['users', 'user_role', 'roles', 'role_menu', 'role_scope_org', 'sessions', 'orgs'];
const OUTSIDE = /outside your authority/;

for (const runtime of RUNTIMES) {
  describe(`data scope and containment (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    let seq = 0;
    const org = { co: 0, a: 0, a1: 0, b: 0 };
    const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
    const get = (path: string, token = admin) => t.call('GET', path, { token });
    const snap = async () => JSON.stringify(await Promise.all(TABLES.map((tb) => t.rows(`SELECT * FROM ${tb} ORDER BY 1, 2`))));
    const menuIds = async (codes: readonly string[]) =>
      (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?)) ORDER BY id`, JSON.stringify(codes))).map((r) => r.id);

    async function addOrg(code: string, parentId = 0) {
      const r = await post('/app/sysOrg/add', { name: code, code, parentId });
      expect(r.status).toBe(200);
      return r.data.id as number;
    }

    /** A role (as the admin) carrying `codes` with the given scope. */
    async function role(codes: readonly string[], dataScope = 'self', scopeOrgIds: number[] = []) {
      const code = `ds_role_${++seq}`;
      const r = await post('/app/sysRole/add', { name: code, code, dataScope, scopeOrgIds });
      expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
      expect((await post('/app/sysRole/grantMenu', { roleId: r.data.id, menuIds: await menuIds(codes) })).status).toBe(200);
      return r.data.id as number;
    }

    /** A user (as the admin) in `orgId` holding `roleIds`. */
    async function user(orgId: number | null, roleIds: number[] = []) {
      const loginName = `ds_user_${++seq}`;
      const r = await post('/app/sysUser/add', { loginName, password: PASSWORD, orgId, roleIds });
      expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
      return { id: r.data.id as number, loginName };
    }

    /** A logged-in caller holding one role with `codes` and `dataScope`, placed in `orgId`. */
    async function caller(codes: readonly string[], dataScope: string, orgId: number | null, scopeOrgIds: number[] = []) {
      const roleId = await role(codes, dataScope, scopeOrgIds);
      const u = await user(orgId, [roleId]);
      return { ...u, roleId, token: await t.login(u.loginName, PASSWORD) };
    }

    const menusOf = async (roleId: number) =>
      (await t.rows<{ m: number }>('SELECT menu_id AS m FROM role_menu WHERE role_id = ? ORDER BY menu_id', roleId)).map((r) => r.m);
    const roleVersion = async (id: number) => (await t.row<{ version: number }>('SELECT version FROM roles WHERE id = ?', id))!.version;
    const version = async (id: number) => (await t.row<{ version: number }>('SELECT version FROM users WHERE id = ?', id))!.version;

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      org.co = await addOrg(`co_${runtime}`);
      org.a = await addOrg(`a_${runtime}`, org.co);
      org.a1 = await addOrg(`a1_${runtime}`, org.a);
      org.b = await addOrg(`b_${runtime}`, org.co);
    }, D1_START_MS);

    describe('who sees whom', () => {
      // caller scope → which of (uA1, uA, uB, uNone, the caller) it sees.
      const TABLE: [string, string, (o: typeof org) => number[], [boolean, boolean, boolean, boolean, boolean]][] = [
        ['all', 'a', () => [], [true, true, true, true, true]],
        ['orgAndBelow', 'a', () => [], [true, true, false, false, true]],
        ['org', 'a', () => [], [false, true, false, false, true]],
        ['custom', 'a', (o) => [o.b], [false, false, true, false, false]],
        ['custom', 'a', (o) => [o.a], [true, true, false, false, true]],
        ['self', 'a', () => [], [false, false, false, false, true]],
        ['orgAndBelow', 'none', () => [], [false, false, false, false, true]],
      ];
      for (const [scope, where, orgs, expected] of TABLE) {
        test(`${scope}${scope === 'custom' ? ' (list)' : ''} in ${where}: page, detail and ownRole agree`, async () => {
          const uA1 = await user(org.a1);
          const uA = await user(org.a);
          const uB = await user(org.b);
          const uNone = await user(null);
          const c = await caller(['sys:user:page', 'sys:user:detail', 'sys:user:ownRole'], scope, where === 'a' ? org.a : null, orgs(org));
          const targets = [uA1.id, uA.id, uB.id, uNone.id, c.id];
          const page = await post('/app/sysUser/page', { pageSize: 100 }, c.token);
          expect(page.status).toBe(200);
          const listed = new Set(page.data.records.map((r: any) => r.id));
          expect(targets.map((id) => listed.has(id))).toEqual(expected);
          for (const [i, id] of targets.entries()) {
            expect((await get(`/app/sysUser/detail?id=${id}`, c.token)).status).toBe(expected[i] ? 200 : 404);
            expect((await get(`/app/sysUser/ownRole?id=${id}`, c.token)).status).toBe(expected[i] ? 200 : 404);
          }
          expect(page.data.total).toBe(page.data.records.length);
        });
      }

      test('page params.orgId means that organisation and everything below it; records carry orgId and orgName', async () => {
        const inA1 = await user(org.a1);
        const inA = await user(org.a);
        const inB = await user(org.b);
        const ids = async (orgId: number) =>
          new Set((await post('/app/sysUser/page', { pageSize: 100, params: { orgId } })).data.records.map((r: any) => r.id));
        const underA = await ids(org.a);
        expect([underA.has(inA1.id), underA.has(inA.id), underA.has(inB.id)]).toEqual([true, true, false]);
        const underCo = await ids(org.co);
        expect([underCo.has(inA1.id), underCo.has(inA.id), underCo.has(inB.id)]).toEqual([true, true, true]);
        const d = await get(`/app/sysUser/detail?id=${inA1.id}`);
        expect(d.data).toMatchObject({ orgId: org.a1, orgName: `a1_${runtime}` });
      });
    });

    describe('writes by id stay inside the scope', () => {
      // Operations on one target; each returns the request to send.
      const OPS: [string, (id: number) => Promise<[string, unknown]>][] = [
        ['edit', async (id) => ['/app/sysUser/edit', { id, version: await version(id), nickName: 'changed' }]],
        ['changeStatus', async (id) => ['/app/sysUser/changeStatus', { id, status: 'disabled' }]],
        ['resetPassword', async (id) => ['/app/sysUser/resetPassword', { id, newPassword: 'Other-Passw0rd-1' }]],
        ['grantRole', async (id) => ['/app/sysUser/grantRole', { userId: id, roleIds: [] }]],
      ];
      for (const [name, op] of OPS) {
        test(`${name}: outside the scope 404 and nothing changes; inside 200`, async () => {
          const c = await caller(USER_CODES, 'orgAndBelow', org.a);
          const outside = await user(org.b);
          const inside = await user(org.a1);
          const before = await snap();
          const [path, body] = await op(outside.id);
          const r = await post(path, body, c.token);
          expect(`${r.status} ${r.json.msg}`).toBe('404 User not found');
          expect(await snap()).toBe(before);
          const [path2, body2] = await op(inside.id);
          expect((await post(path2, body2, c.token)).status).toBe(200);
        });
      }

      test('delete: an id outside the scope is skipped like an unknown id; the others go', async () => {
        const c = await caller(USER_CODES, 'orgAndBelow', org.a);
        const outside = await user(org.b);
        const inside = await user(org.a1);
        expect((await post('/app/sysUser/delete', { ids: [outside.id, inside.id, 987654] }, c.token)).status).toBe(200);
        expect(await t.row('SELECT id FROM users WHERE id = ?', outside.id)).not.toBeNull();
        expect(await t.row('SELECT id FROM users WHERE id = ?', inside.id)).toBeNull();
      });

      test('add and edit cannot place a user outside the scope (403), nor leave one without an organisation', async () => {
        const c = await caller(USER_CODES, 'orgAndBelow', org.a);
        const inside = await user(org.a1);
        const before = await snap();
        for (const orgId of [org.b, org.co, null]) {
          const add = await post('/app/sysUser/add', { loginName: `ds_out_${++seq}`, password: PASSWORD, orgId }, c.token);
          expect(add.status).toBe(403);
          const edit = await post('/app/sysUser/edit', { id: inside.id, version: await version(inside.id), orgId }, c.token);
          expect(edit.status).toBe(403);
        }
        expect((await post('/app/sysUser/add', { loginName: `ds_none_${++seq}`, password: PASSWORD }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
        const ok = await post('/app/sysUser/add', { loginName: `ds_in_${++seq}`, password: PASSWORD, orgId: org.a1 }, c.token);
        expect(ok.status).toBe(200);
        expect(ok.data.orgId).toBe(org.a1);
        const moved = await post('/app/sysUser/edit', { id: ok.data.id, version: ok.data.version, orgId: org.a }, c.token);
        expect(moved.status).toBe(200);
        expect(moved.data.orgName).toBe(`a_${runtime}`);
      });

      test('nobody but a super admin changes their own roles or organisation', async () => {
        const c = await caller(USER_CODES, 'orgAndBelow', org.a);
        const extra = await role([], 'orgAndBelow');
        const before = await snap();
        expect((await post('/app/sysUser/grantRole', { userId: c.id, roleIds: [c.roleId, extra] }, c.token)).status).toBe(403);
        expect((await post('/app/sysUser/edit', { id: c.id, version: await version(c.id), roleIds: [c.roleId, extra] }, c.token)).status).toBe(403);
        expect((await post('/app/sysUser/edit', { id: c.id, version: await version(c.id), orgId: org.a1 }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
        // Re-sending the same set changes nothing and is fine.
        expect((await post('/app/sysUser/grantRole', { userId: c.id, roleIds: [c.roleId] }, c.token)).status).toBe(200);
      });
    });

    describe('containment: codes and scope of the target', () => {
      test('a role carrying a menu WITHOUT a code the caller lacks: grantRole, add and edit refuse to give or take it (403, nothing changes)', async () => {
        // The containment guard compares codes only; this rule (roles whose menus one holds, any
        // menu) is judged by its own guard inside the write, without a read before it.
        const c = await caller(USER_CODES, 'all', org.a);
        const [dir] = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IS NULL ORDER BY id LIMIT 1`)).map((r) => r.id);
        const r = await post('/app/sysRole/add', { name: `codeless_${++seq}`, code: `codeless_${seq}` });
        expect((await post('/app/sysRole/grantMenu', { roleId: r.data.id, menuIds: [...(await menuIds(['sys:user:page'])), dir] })).status).toBe(200);
        const target = await user(org.a);
        const msg = /^roleIds: you can only grant or revoke roles whose menus you hold yourself/;
        let before = await snap();
        for (const [path, body] of [
          ['/app/sysUser/grantRole', { userId: target.id, roleIds: [r.data.id] }],
          ['/app/sysUser/edit', { id: target.id, version: await version(target.id), roleIds: [r.data.id] }],
          ['/app/sysUser/add', { loginName: `codeless_user_${++seq}`, password: PASSWORD, orgId: org.a, roleIds: [r.data.id] }],
        ] as const) {
          const res = await post(path, body, c.token);
          expect(`${path} ${res.status} ${res.json.msg}`).toMatch(new RegExp(`^${path} 403 ${msg.source.slice(1)}`));
          expect(await snap()).toBe(before);
        }
        // Taking it away is refused too.
        expect((await post('/app/sysUser/grantRole', { userId: target.id, roleIds: [r.data.id] })).status).toBe(200);
        before = await snap();
        const taken = await post('/app/sysUser/grantRole', { userId: target.id, roleIds: [] }, c.token);
        expect(`${taken.status} ${taken.json.msg}`).toMatch(/^403 roleIds: you can only grant or revoke roles/);
        expect(await snap()).toBe(before);
      });

      // Every write on a user, against a target holding a code the caller lacks.
      const OPS: [string, (id: number, roleId: number) => Promise<[string, unknown]>][] = [
        ['edit', async (id) => ['/app/sysUser/edit', { id, version: await version(id), nickName: 'x' }]],
        ['delete', async (id) => ['/app/sysUser/delete', { ids: [id] }]],
        ['changeStatus', async (id) => ['/app/sysUser/changeStatus', { id, status: 'disabled' }]],
        ['resetPassword', async (id) => ['/app/sysUser/resetPassword', { id, newPassword: 'Other-Passw0rd-1' }]],
        ['grantRole', async (id) => ['/app/sysUser/grantRole', { userId: id, roleIds: [] }]],
      ];
      for (const [name, op] of OPS) {
        test(`${name}: a target holding a code the caller lacks → 403, nothing changes; with the code → 200`, async () => {
          const c = await caller(USER_CODES, 'all', org.a);
          const strong = await user(org.a, [await role(['sys:opLog:clear'])]);
          const before = await snap();
          const [path, body] = await op(strong.id, 0);
          const r = await post(path, body, c.token);
          expect(r.status).toBe(403);
          // grantRole's own rule (only roles whose menus one holds) may answer first.
          expect(r.json.msg).toMatch(name === 'grantRole' ? /outside your authority|^roleIds: you can only grant or revoke roles/ : OUTSIDE);
          expect(await snap()).toBe(before);
          const weak = await user(org.a, [await role(['sys:user:page'])]);
          const [p2, b2] = await op(weak.id, 0);
          expect((await post(p2, b2, c.token)).status).toBe(200);
        });

        test(`${name}: a target whose data scope is wider than the caller's → 403`, async () => {
          const c = await caller(USER_CODES, 'orgAndBelow', org.a);
          const wide = await user(org.a1, [await role([], 'all')]);
          const before = await snap();
          const [path, body] = await op(wide.id, 0);
          const r = await post(path, body, c.token);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*outside your authority/);
          expect(await snap()).toBe(before);
        });
      }

      test('grantRole/add/edit cannot give a user codes (or a scope) beyond the caller', async () => {
        const c = await caller(USER_CODES, 'orgAndBelow', org.a);
        const target = await user(org.a1);
        const wideScope = await role([], 'all');
        const before = await snap();
        expect((await post('/app/sysUser/grantRole', { userId: target.id, roleIds: [wideScope] }, c.token)).status).toBe(403);
        expect((await post('/app/sysUser/add', { loginName: `ds_w_${++seq}`, password: PASSWORD, orgId: org.a1, roleIds: [wideScope] }, c.token)).status).toBe(403);
        expect((await post('/app/sysUser/edit', { id: target.id, version: await version(target.id), roleIds: [wideScope] }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
      });

      test('race: a grant widening the target between the check and the write still refuses the reset (guard in the batch)', async () => {
        const c = await caller(USER_CODES, 'all', org.a);
        const target = await user(org.a);
        const strong = await role(['sys:opLog:clear']);
        const widen = onceBeforeWrite(t, () => t.exec('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)', target.id, strong));
        try {
          const before = await t.row('SELECT password_hash, version, updated_at FROM users WHERE id = ?', target.id);
          const r = await post('/app/sysUser/resetPassword', { id: target.id, newPassword: 'Other-Passw0rd-1' }, c.token);
          expect(widen.ran()).toBe(true);
          expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*outside your authority/);
          expect(await t.row('SELECT password_hash, version, updated_at FROM users WHERE id = ?', target.id)).toEqual(before);
          expect(await t.row('SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NOT NULL', target.id)).toEqual({ n: 0 });
        } finally {
          widen.restore();
        }
      });
    });

    describe('roles: containment and data scope grants', () => {
      const ROLE_OPS: [string, (id: number) => Promise<[string, unknown]>][] = [
        ['edit', async (id) => ['/app/sysRole/edit', { id, version: (await t.row<{ version: number }>('SELECT version FROM roles WHERE id = ?', id))!.version, name: 'x' }]],
        ['delete', async (id) => ['/app/sysRole/delete', { ids: [id] }]],
        ['changeStatus', async (id) => ['/app/sysRole/changeStatus', { id, status: 'enabled' }]],
        ['grantMenu', async (id) => ['/app/sysRole/grantMenu', { roleId: id, menuIds: [] }]],
        ['grantDataScope', async (id) => ['/app/sysRole/grantDataScope', { roleId: id, dataScope: 'self' }]],
      ];
      for (const [name, op] of ROLE_OPS) {
        test(`${name}: a role carrying a code the caller lacks, or a wider scope → 403, nothing changes`, async () => {
          const c = await caller(ROLE_CODES, 'orgAndBelow', org.a);
          for (const target of [await role(['sys:opLog:clear']), await role([], 'all'), await role([], 'custom', [org.b])]) {
            const before = await snap();
            const [path, body] = await op(target);
            const r = await post(path, body, c.token);
            expect(`${r.status} ${r.json.msg}`).toMatch(/^403 .*outside your authority|^403 dataScope: |^403 menuIds: .*not held/);
            expect(await snap()).toBe(before);
          }
          const [path, body] = await op(await role(['sys:role:page'], 'custom', [org.a1]));
          expect((await post(path, body, c.token)).status).toBe(200);
        });
      }

      test('grantMenu by a delegated admin: menus they do not hold cannot be granted or revoked (403, nothing changes)', async () => {
        const c = await caller(['sys:role:grantMenu', 'sys:user:page'], 'all', org.a);
        const [pageMenu, clearMenu] = await menuIds(['sys:user:page', 'sys:opLog:clear']);
        const target = await role([]);
        const before = await snap();
        for (const ids of [[pageMenu!, clearMenu!], [clearMenu!]]) {
          const r = await post('/app/sysRole/grantMenu', { roleId: target, menuIds: ids }, c.token);
          expect(`${r.status} ${r.json.msg}`).toMatch(new RegExp(`^403 menuIds: .*not held: menu ${clearMenu}$`));
        }
        expect(await snap()).toBe(before);
        expect((await post('/app/sysRole/grantMenu', { roleId: target, menuIds: [pageMenu!] }, c.token)).status).toBe(200);
        expect(await menusOf(target)).toEqual([pageMenu!]);
      });

      // A menu the caller holds when the request is checked, but not any more when its batch runs:
      // the batch itself refuses (403) and the role keeps its menus, for a grant and for a revoke,
      // and whether or not the menu carries a code (code-less menus escape the containment guard,
      // which looks at codes).
      const RACES = [
        ['grant', 'a button with a code'],
        ['revoke', 'a menu without a code'],
      ] as const;
      for (const [change, kind] of RACES) {
        test(`grantMenu race: the caller loses ${kind} between the check and the ${change} → 403, the role is unchanged`, async () => {
          const c = await caller(['sys:role:grantMenu'], 'all', org.a);
          const contested =
            kind === 'a menu without a code'
              ? (await t.row<{ id: number }>("SELECT id FROM menus WHERE permission IS NULL ORDER BY id LIMIT 1"))!.id
              : (await menuIds(['sys:user:page']))[0]!;
          await t.exec('INSERT INTO role_menu (role_id, menu_id) VALUES (?, ?)', c.roleId, contested);
          const target = await role([]);
          if (change === 'revoke') await t.exec('INSERT INTO role_menu (role_id, menu_id) VALUES (?, ?)', target, contested);
          const menusBefore = await menusOf(target);
          const revoke = onceBeforeWrite(t, () => t.exec('DELETE FROM role_menu WHERE role_id = ? AND menu_id = ?', c.roleId, contested));
          try {
            const r = await post('/app/sysRole/grantMenu', { roleId: target, menuIds: change === 'grant' ? [contested] : [] }, c.token);
            expect(revoke.ran()).toBe(true);
            // grantMenu's checks are guards of its one batch; on a refusal it names the menus not held
            // (read after the failed batch, which changed nothing), as it does without a race.
            expect(`${r.status} ${r.json.msg}`).toMatch(new RegExp(`^403 menuIds: .*not held: menu ${contested}$`));
            expect(await menusOf(target)).toEqual(menusBefore);
          } finally {
            revoke.restore();
          }
        });
      }

      test('grantDataScope never gives a scope wider than the granter\'s own (403); narrower or equal is fine', async () => {
        const c = await caller(ROLE_CODES, 'orgAndBelow', org.a);
        const r = await role([]);
        const before = await snap();
        for (const body of [{ dataScope: 'all' }, { dataScope: 'custom', scopeOrgIds: [org.b] }, { dataScope: 'custom', scopeOrgIds: [org.co] }]) {
          const res = await post('/app/sysRole/grantDataScope', { roleId: r, ...body }, c.token);
          expect(res.status).toBe(403);
        }
        expect((await post('/app/sysRole/add', { name: 'w', code: `ds_w_${++seq}`, dataScope: 'all' }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
        for (const body of [{ dataScope: 'orgAndBelow' }, { dataScope: 'org' }, { dataScope: 'custom', scopeOrgIds: [org.a1, org.a] }, { dataScope: 'self' }]) {
          expect((await post('/app/sysRole/grantDataScope', { roleId: r, ...body }, c.token)).status).toBe(200);
        }
        const d = await get(`/app/sysRole/detail?id=${r}`);
        expect(d.data).toMatchObject({ dataScope: 'self', scopeOrgIds: [] });
      });

      test('roles record their scope; new roles default to self; scopeOrgIds only with custom; unknown orgs 400', async () => {
        const plain = await post('/app/sysRole/add', { name: 'p', code: `ds_p_${++seq}` });
        expect(plain.data).toMatchObject({ dataScope: 'self', scopeOrgIds: [] });
        expect((await post('/app/sysRole/add', { name: 'p', code: `ds_p_${++seq}`, dataScope: 'org', scopeOrgIds: [org.a] })).status).toBe(400);
        expect((await post('/app/sysRole/add', { name: 'p', code: `ds_p_${++seq}`, dataScope: 'custom', scopeOrgIds: [987654] })).status).toBe(400);
        const custom = await post('/app/sysRole/add', { name: 'p', code: `ds_p_${++seq}`, dataScope: 'custom', scopeOrgIds: [org.b, org.a] });
        expect(custom.data).toMatchObject({ dataScope: 'custom', scopeOrgIds: [org.a, org.b].sort((x, y) => x - y) });
        // The built-in role migrated to `all`.
        expect((await get('/app/sysRole/detail?id=1')).data.dataScope).toBe('all');
      });

      test('edit with status also needs sys:role:changeStatus; with dataScope/scopeOrgIds also sys:role:grantDataScope', async () => {
        const c = await caller(['sys:role:edit'], 'all', org.a);
        const r = await role([]);
        const before = await snap();
        expect((await post('/app/sysRole/edit', { id: r, version: await roleVersion(r), status: 'disabled' }, c.token)).status).toBe(403);
        expect((await post('/app/sysRole/edit', { id: r, version: await roleVersion(r), dataScope: 'all' }, c.token)).status).toBe(403);
        expect((await post('/app/sysRole/edit', { id: r, version: await roleVersion(r), scopeOrgIds: [] }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
        expect((await post('/app/sysRole/edit', { id: r, version: await roleVersion(r), name: 'renamed' }, c.token)).status).toBe(200);
      });
    });

    describe('the reported escalations (named regressions)', () => {
      test('resetPassword holder resets the password of a stronger user, logs in and clears the op log: 403', async () => {
        const c = await caller(['sys:user:page', 'sys:user:resetPassword'], 'all', org.a);
        const strong = await user(org.a, [await role(['sys:opLog:clear', 'sys:role:grantMenu', 'sys:user:grantRole'])]);
        const before = await snap();
        const r = await post('/app/sysUser/resetPassword', { id: strong.id, newPassword: 'Attacker-Pass-77' }, c.token);
        expect(r.status).toBe(403);
        expect(await snap()).toBe(before);
        expect((await post('/auth/login', { loginName: strong.loginName, password: 'Attacker-Pass-77' }, '')).status).toBe(401);
      });

      test('changeStatus holder re-enables a disabled role of their own that carries sys:opLog:clear: 403', async () => {
        const c = await caller(['sys:role:changeStatus'], 'all', org.a);
        const hidden = await role(['sys:opLog:clear']);
        expect((await post('/app/sysRole/changeStatus', { id: hidden, status: 'disabled' })).status).toBe(200);
        expect((await post('/app/sysUser/grantRole', { userId: c.id, roleIds: [c.roleId, hidden] })).status).toBe(200);
        const before = await snap();
        const r = await post('/app/sysRole/changeStatus', { id: hidden, status: 'enabled' }, c.token);
        expect(r.status).toBe(403);
        expect(await snap()).toBe(before);
        expect((await post('/app/sysOpLog/clear', {}, c.token)).status).toBe(403);
      });

      test('a delegated admin disables a user holding more permissions: 403', async () => {
        const c = await caller(['sys:user:changeStatus'], 'all', org.a);
        const strong = await user(org.a, [await role(['sys:user:changeStatus', 'sys:user:delete'])]);
        const before = await snap();
        expect((await post('/app/sysUser/changeStatus', { id: strong.id, status: 'disabled' }, c.token)).status).toBe(403);
        expect(await snap()).toBe(before);
      });

      test('sysRole/edit changes status without sys:role:changeStatus: 403', async () => {
        const c = await caller(['sys:role:edit'], 'all', org.a);
        const r = await role([]);
        const before = await snap();
        const res = await post('/app/sysRole/edit', { id: r, version: await roleVersion(r), status: 'disabled' }, c.token);
        expect(`${res.status} ${res.json.msg}`).toMatch(/^403 status: /);
        expect(await snap()).toBe(before);
      });
    });
  });
}
