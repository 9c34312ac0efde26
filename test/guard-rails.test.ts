import { beforeAll, describe, expect, test } from 'bun:test';
import { PERMISSION_CODES } from '../src/core/permissions.ts';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { USER_PASSWORD, enabledSuperAdmins, snapshot, superAdmin, userWithCodes, withWriteBarrier } from './support/rbac.ts';

/**
 * Guard rails of the permission model: the last enabled super admin (an enabled user holding the
 * enabled superAdmin role) can never be deleted, disabled or stripped of the role, by any path,
 * not even by two concurrent requests; nobody deletes or disables their own account.
 * Since only a super admin may act on a user holding the superAdmin role (test/escalation.test.ts),
 * the user-level paths are tried by super admins on themselves or on each other; a manager without
 * the role gets 403 there, and still reaches the role-level guard rails.
 */

let t: AnyTestApp;
let admin: string;
/** A user with every sys:user / sys:role code but not a super admin. */
let manager: { token: string; userId: number };

const LAST = 'no enabled user holding the enabled superAdmin role';
const ONLY_SUPER = 'Only a super administrator can';
const TABLES = ['users', 'user_role', 'roles', 'role_menu', 'sessions'];

// One body per runtime (bun:sqlite, and a real D1 in workerd), the way Kysely runs its tests per dialect.
for (const runtime of RUNTIMES) {
  describe(runtime, () => {
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
      manager = await userWithCodes(
        t,
        PERMISSION_CODES.filter((c) => c.startsWith('sys:user:') || c.startsWith('sys:role:')),
        'manager',
      );
    }, D1_START_MS);
    suite();
  });
}

const post = (path: string, body: unknown, token = manager.token) => t.call('POST', path, { token, body });
const version = async (table: 'users' | 'roles', id: number) => (await t.row<{ version: number }>(`SELECT version FROM ${table} WHERE id = ?`, id))!.version;
/** Ids of the enabled super admins right now. */
const superIds = async () =>
  (
    await t.rows<{ id: number }>(
      `SELECT u.id FROM users u JOIN user_role ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
       WHERE u.status = 'enabled' AND r.status = 'enabled' AND r.code = 'superAdmin' ORDER BY u.id`,
    )
  ).map((r) => r.id);

function suite() {
  describe('nobody deletes or disables their own account', () => {
    test('delete, changeStatus and edit of oneself are 400 and change nothing', async () => {
      const before = await snapshot(t, ...TABLES);
      for (const [path, body, token] of [
        ['/app/sysUser/delete', { ids: [1] }, admin],
        ['/app/sysUser/changeStatus', { id: 1, status: 'disabled' }, admin],
        ['/app/sysUser/edit', { id: 1, version: await version('users', 1), status: 'disabled' }, admin],
        ['/app/sysUser/delete', { ids: [manager.userId, 999999] }, manager.token],
        ['/app/sysUser/changeStatus', { id: manager.userId, status: 'disabled' }, manager.token],
      ] as const) {
        const r = await post(path, body, token);
        expect(r.status).toBe(400);
        expect(r.json.msg).toContain('your own account');
      }
      expect(await snapshot(t, ...TABLES)).toBe(before);
      expect((await post('/app/sysUser/changeStatus', { id: 1, status: 'enabled' }, admin)).status).toBe(200);
    });
  });

  describe('the last enabled super admin stays, through every path', () => {
    test('every removing path is refused and changes nothing', async () => {
      expect(await superIds()).toEqual([1]);
      // A disabled user holding the role and a holder of a disabled copy do not count as super admins.
      const dormant = await post('/app/sysUser/add', { loginName: 'dormant', password: USER_PASSWORD, roleIds: [1], status: 'disabled' }, admin);
      expect(dormant.status).toBe(200);
      const other = (await post('/app/sysRole/add', { name: 'Other', code: 'other_role' }, admin)).data.id as number;
      const before = await snapshot(t, ...TABLES);
      // The last super admin stripping its own role (deleting or disabling oneself is refused earlier).
      const own: [string, unknown][] = [
        ['/app/sysUser/edit', { id: 1, version: await version('users', 1), roleIds: [other] }],
        ['/app/sysUser/edit', { id: 1, version: await version('users', 1), roleIds: [] }],
        ['/app/sysUser/grantRole', { userId: 1, roleIds: [] }],
        ['/app/sysUser/grantRole', { userId: 1, roleIds: [other] }],
      ];
      for (const [path, body] of own) {
        const r = await post(path, body, admin);
        expect(`${path} ${r.status}`).toBe(`${path} 400`);
        expect(r.json.msg).toContain(LAST);
      }
      // The role-level paths, by a manager holding every sys:role code, and by the super admin.
      for (const token of [manager.token, admin]) {
        for (const [path, body] of [
          ['/app/sysRole/changeStatus', { id: 1, status: 'disabled' }],
          ['/app/sysRole/edit', { id: 1, version: await version('roles', 1), status: 'disabled' }],
        ] as const) {
          const r = await post(path, body, token);
          expect(`${path} ${r.status}`).toBe(`${path} 400`);
          expect(r.json.msg).toContain(LAST);
        }
      }
      // The user-level paths by the manager: not a super admin, so refused before any guard rail.
      for (const [path, body] of [
        ['/app/sysUser/delete', { ids: [1] }],
        ['/app/sysUser/delete', { ids: [1, dormant.data.id] }],
        ['/app/sysUser/changeStatus', { id: 1, status: 'disabled' }],
        ['/app/sysUser/edit', { id: 1, version: await version('users', 1), status: 'disabled' }],
        ['/app/sysUser/edit', { id: 1, version: await version('users', 1), roleIds: [other] }],
        ['/app/sysUser/grantRole', { userId: 1, roleIds: [] }],
        ['/app/sysUser/grantRole', { userId: 1, roleIds: [other] }],
      ] as const) {
        const r = await post(path, body);
        expect(`${path} ${r.status}`).toBe(`${path} 403`);
        expect(r.json.msg).toContain(ONLY_SUPER);
      }
      const del = await post('/app/sysRole/delete', { ids: [1] });
      expect(del.status).toBe(400);
      expect(del.json.msg).toContain('superAdmin');
      expect(await snapshot(t, ...TABLES)).toBe(before);
      expect(await superIds()).toEqual([1]);
      expect((await t.call('POST', '/app/sysUser/page', { token: admin, body: {} })).status).toBe(200);
      // Refused attempts are in the op log with their 400.
      const logged = (await t.row<{ n: number }>("SELECT count(*) AS n FROM op_log WHERE status = 400 AND error_msg LIKE '%no enabled user holding%'"))!;
      expect(logged.n).toBeGreaterThanOrEqual(own.length + 4);
    });

    test('with a second super admin one may go, then the other is the last', async () => {
      const b = await superAdmin(t, admin, 'second_super');
      expect(await superIds()).toEqual([1, b.userId]);
      expect((await post('/app/sysUser/changeStatus', { id: b.userId, status: 'disabled' }, admin)).status).toBe(200);
      expect((await post('/app/sysUser/grantRole', { userId: 1, roleIds: [] }, admin)).json.msg).toContain(LAST);
      expect((await post('/app/sysUser/changeStatus', { id: b.userId, status: 'enabled' }, admin)).status).toBe(200);
      const bToken = await t.login('second_super', USER_PASSWORD);
      expect((await post('/app/sysUser/grantRole', { userId: 1, roleIds: [] }, bToken)).status).toBe(200);
      expect(await superIds()).toEqual([b.userId]);
      expect((await post('/app/sysUser/grantRole', { userId: b.userId, roleIds: [] }, bToken)).json.msg).toContain(LAST);
      expect((await post('/app/sysUser/edit', { id: b.userId, version: await version('users', b.userId), roleIds: [] }, bToken)).json.msg).toContain(LAST);
      expect((await post('/app/sysUser/delete', { ids: [b.userId] }, bToken)).status).toBe(400);
      expect((await post('/app/sysUser/grantRole', { userId: b.userId, roleIds: [] })).status).toBe(403);
      expect((await post('/app/sysUser/grantRole', { userId: 1, roleIds: [1] }, bToken)).status).toBe(200);
      expect((await post('/app/sysUser/delete', { ids: [b.userId] }, admin)).status).toBe(200);
      expect(await superIds()).toEqual([1]);
    });
  });

  describe('races: two requests that each remove one of the last two super admins', () => {
    /** Two fresh super admins become the only ones (user 1 loses the role until cleanup). */
    async function lastTwo(name: string) {
      const b = await superAdmin(t, admin, `${name}_b`);
      const c = await superAdmin(t, admin, `${name}_c`);
      await t.exec('DELETE FROM user_role WHERE role_id = 1 AND user_id NOT IN (?, ?)', b.userId, c.userId);
      expect(await superIds()).toEqual([b.userId, c.userId]);
      return [b, c] as const;
    }
    async function cleanup(...ids: number[]) {
      for (const id of ids) await t.exec('DELETE FROM users WHERE id = ?', id);
      await t.exec('INSERT OR IGNORE INTO user_role (user_id, role_id) VALUES (1, 1)');
      expect(await superIds()).toEqual([1]);
    }

    const removers: Record<string, (id: number) => Promise<[string, unknown]>> = {
      delete: async (id) => ['/app/sysUser/delete', { ids: [id] }],
      disable: async (id) => ['/app/sysUser/changeStatus', { id, status: 'disabled' }],
      revoke: async (id) => ['/app/sysUser/grantRole', { userId: id, roleIds: [] }],
      editDisable: async (id) => ['/app/sysUser/edit', { id, version: await version('users', id), status: 'disabled' }],
      editRoles: async (id) => ['/app/sysUser/edit', { id, version: await version('users', id), roleIds: [] }],
    };
    const pairs = [
      ['delete', 'delete'],
      ['disable', 'disable'],
      ['revoke', 'revoke'],
      ['delete', 'revoke'],
      ['revoke', 'disable'],
      ['editDisable', 'delete'],
      ['editRoles', 'disable'],
    ] as const;

    for (const [first, second] of pairs) {
      for (const barrier of [true, false]) {
        test(`${first} vs ${second}${barrier ? ' (both past their checks before either writes)' : ''}`, async () => {
          const [b, c] = await lastTwo(`${first}_${second}_${barrier ? 'b' : 'n'}`);
          const [p1, body1] = await removers[first]!(b.userId);
          const [p2, body2] = await removers[second]!(c.userId);
          // Each super admin removes the other (only super admins may act on a super admin).
          const send = () => Promise.all([post(p1, body1, c.token), post(p2, body2, b.token)]);
          const { result, writes } = barrier ? await withWriteBarrier(t, 2, send) : { result: await send(), writes: 2 };
          if (barrier) {
            expect(writes).toBe(2);
            // Both passed their checks; the second batch finds its caller removed by the first: its
            // own verdict at the head of the batch refuses it (401: session ended with the account or
            // its status; 403: no longer a super admin), before the last-super-admin guard would.
            const statuses = result.map((r) => r.status).sort();
            expect(statuses[0]).toBe(200);
            expect([401, 403]).toContain(statuses[1]!);
          } else {
            // Unsynchronised, the loser may also be stopped earlier: its session is gone (401) or it
            // no longer is a super admin (403). Either way one super admin remains.
            const statuses = result.map((r) => r.status).sort();
            expect(statuses[0]).toBe(200);
            expect([400, 401, 403]).toContain(statuses[1]!);
          }
          expect(await enabledSuperAdmins(t)).toBe(1);
          await cleanup(b.userId, c.userId);
        });
      }
    }

    test('two super admins deleting each other at the same moment: one succeeds', async () => {
      const [b, c] = await lastTwo('mutual');
      const { result, writes } = await withWriteBarrier(t, 2, () =>
        Promise.all([post('/app/sysUser/delete', { ids: [c.userId] }, b.token), post('/app/sysUser/delete', { ids: [b.userId] }, c.token)]),
      );
      expect(writes).toBe(2);
      // The loser's session went with its account: its own verdict (401) refuses its batch.
      expect(result.map((r) => r.status).sort()).toEqual([200, 401]);
      expect(await enabledSuperAdmins(t)).toBe(1);
      await cleanup(b.userId, c.userId);
    });

    test('the last two super admins each giving up the role at the same moment: the guard inside the write keeps one', async () => {
      // Each caller is still a super admin when its own batch runs (it gave up only its own role),
      // so nothing but the last-super-admin guard can refuse the second batch.
      const [b, c] = await lastTwo('selfrevoke');
      const { result, writes } = await withWriteBarrier(t, 2, () =>
        Promise.all([post('/app/sysUser/grantRole', { userId: b.userId, roleIds: [] }, b.token), post('/app/sysUser/grantRole', { userId: c.userId, roleIds: [] }, c.token)]),
      );
      expect(writes).toBe(2);
      expect(result.map((r) => r.status).sort()).toEqual([200, 400]);
      expect(result.find((r) => r.status === 400)!.json.msg).toContain(LAST);
      expect(await enabledSuperAdmins(t)).toBe(1);
      await cleanup(b.userId, c.userId);
    });

    test('disabling the superAdmin role races a user removal: the role stays enabled', async () => {
      const [b, c] = await lastTwo('rolerace');
      const { result } = await withWriteBarrier(t, 2, () =>
        Promise.all([post('/app/sysRole/changeStatus', { id: 1, status: 'disabled' }), post('/app/sysUser/delete', { ids: [b.userId] }, c.token)]),
      );
      const [role, del] = result;
      expect(role!.status).toBe(400);
      expect(del!.status).toBe(200);
      expect(await superIds()).toEqual([c.userId]);
      await cleanup(b.userId, c.userId);
    });
  });
}
