import type { PermissionCode } from '../../src/core/permissions';
import type { TestApp } from './app';

/** A password that passes the policy, for users made by tests. */
export const USER_PASSWORD = 'Valid-Passw0rd-9';

/** Menu ids of the seeded buttons carrying these permission codes. */
export function menuIdsFor(t: TestApp, codes: readonly string[]): number[] {
  if (codes.length === 0) return [];
  const marks = codes.map(() => '?').join(',');
  return (t.sqlite.query(`SELECT id FROM menus WHERE permission IN (${marks}) ORDER BY id`).all(...codes) as { id: number }[]).map((r) => r.id);
}

let seq = 0;

/**
 * Through the API as the admin: a role granted exactly `codes` with data scope `all` (so the
 * codes alone decide; data-scope tests narrow it), a user holding it, and that user's token.
 * `codes` empty gives a logged-in user without any permission.
 */
export async function userWithCodes(t: TestApp, adminToken: string, codes: readonly PermissionCode[], name = `user${++seq}`) {
  const role = await t.call('POST', '/app/sysRole/add', { token: adminToken, body: { name: `Role of ${name}`, code: `r_${name}`, dataScope: 'all' } });
  if (role.status !== 200) throw new Error(`role add failed: ${role.status} ${role.json.msg}`);
  const roleId = role.data.id as number;
  const grant = await t.call('POST', '/app/sysRole/grantMenu', { token: adminToken, body: { roleId, menuIds: menuIdsFor(t, codes) } });
  if (grant.status !== 200) throw new Error(`grant failed: ${grant.status} ${grant.json.msg}`);
  const user = await t.call('POST', '/app/sysUser/add', {
    token: adminToken,
    body: { loginName: name, password: USER_PASSWORD, roleIds: [roleId] },
  });
  if (user.status !== 200) throw new Error(`user add failed: ${user.status} ${user.json.msg}`);
  const token = await t.login(name, USER_PASSWORD);
  return { token, userId: user.data.id as number, roleId, loginName: name };
}

/** A second enabled super admin (holding role 1), with a token. */
export async function superAdmin(t: TestApp, adminToken: string, name = `super${++seq}`) {
  const user = await t.call('POST', '/app/sysUser/add', { token: adminToken, body: { loginName: name, password: USER_PASSWORD, roleIds: [1] } });
  if (user.status !== 200) throw new Error(`user add failed: ${user.status} ${user.json.msg}`);
  return { userId: user.data.id as number, token: await t.login(name, USER_PASSWORD), loginName: name };
}

/** Rows of a table as plain objects, to compare before/after a refused request. */
export function snapshot(t: TestApp, ...tables: string[]): string {
  return JSON.stringify(tables.map((table) => t.sqlite.query(`SELECT * FROM ${table}`).all().map((r) => JSON.stringify(r)).sort()));
}

/** Number of enabled users holding the enabled superAdmin role. */
export function enabledSuperAdmins(t: TestApp): number {
  return (
    t.sqlite
      .query(
        `SELECT count(*) AS n FROM users u JOIN user_role ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
         WHERE u.status = 'enabled' AND r.status = 'enabled' AND r.code = 'superAdmin'`,
      )
      .get() as { n: number }
  ).n;
}

/**
 * Runs `fn` with a barrier in front of deps.atomic: each write waits until `parties` writes have
 * arrived (or 500 ms passed), so concurrent requests all make their early checks before any of
 * them writes — the worst interleaving for check-then-write code. Returns how many writes arrived.
 */
export async function withWriteBarrier<T>(t: TestApp, parties: number, fn: () => Promise<T>): Promise<{ result: T; writes: number }> {
  const atomic = t.deps.atomic;
  const waiting: (() => void)[] = [];
  let writes = 0;
  t.deps.atomic = async (q) => {
    writes++;
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length === parties) for (const go of waiting.splice(0)) go();
      else setTimeout(resolve, 500);
    });
    return atomic(q);
  };
  try {
    return { result: await fn(), writes };
  } finally {
    t.deps.atomic = atomic;
  }
}
