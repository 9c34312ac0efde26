import { isOpLogRecord } from './app.ts';
import type { PermissionCode } from '../../src/core/permissions.ts';
import type { AnyTestApp, BunTestApp } from './app.ts';

/** A password that passes the policy, for users made by tests. */
export const USER_PASSWORD = 'Valid-Passw0rd-9';

type Maybe<T> = T | Promise<T>;

/**
 * Rows of a read-only query on either runtime: at once on Bun (the older single-runtime tests read
 * these helpers synchronously), as a promise on D1. Suites that run on both `await` the result.
 */
function query<T, R>(t: AnyTestApp, sql: string, params: (string | number)[], shape: (rows: T[]) => R): Maybe<R> {
  if (t.runtime === 'bun') return shape(t.sqlite.query(sql).all(...params) as T[]);
  return t.rows<T>(sql, ...params).then(shape);
}

/** Menu ids of the seeded buttons carrying these permission codes. */
export function menuIdsFor(t: BunTestApp, codes: readonly string[]): number[];
export function menuIdsFor(t: AnyTestApp, codes: readonly string[]): Maybe<number[]>;
export function menuIdsFor(t: AnyTestApp, codes: readonly string[]): Maybe<number[]> {
  if (codes.length === 0) return [];
  const marks = codes.map(() => '?').join(',');
  return query<{ id: number }, number[]>(t, `SELECT id FROM menus WHERE permission IN (${marks}) ORDER BY id`, [...codes], (rows) => rows.map((r) => r.id));
}

let seq = 0;

/** What `userWithCodes` made. */
export interface FixtureUser {
  token: string;
  userId: number;
  roleId: number;
  loginName: string;
  /** The same as loginName (older tests read `name`). */
  name: string;
}

/**
 * The one user fixture: a non-admin user holding exactly `codes` through a fresh role of its own,
 * written straight into the database (the users/roles API is tested by its own suites, and this
 * leaves no op-log or admin session behind), then logged in through the API. Works on either
 * runtime. A code without a seeded menu button throws. `codes` empty gives a user without any
 * permission. The older form `userWithCodes(t, adminToken, codes, name)` still works.
 */
export async function userWithCodes(t: AnyTestApp, codes: readonly string[], name?: string, password?: string): Promise<FixtureUser>;
export async function userWithCodes(t: AnyTestApp, adminToken: string, codes: readonly PermissionCode[], name?: string): Promise<FixtureUser>;
export async function userWithCodes(t: AnyTestApp, ...args: [readonly string[], string?, string?] | [string, readonly string[], string?]): Promise<FixtureUser> {
  const [codes, name = `user${++seq}`, password = USER_PASSWORD] = (typeof args[0] === 'string' ? args.slice(1) : args) as [readonly string[], string?, string?];
  const now = new Date(t.clock.now()).toISOString();
  const hash = await t.deps.hasher.hash(password);
  const user = await t.row<{ id: number }>(
    `INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at) VALUES (?, ?, ?, 'enabled', ?, ?) RETURNING id`,
    name, hash, name, now, now,
  );
  const role = await t.row<{ id: number }>(
    // Data scope `all`, so the codes alone decide (data-scope tests narrow it).
    `INSERT INTO roles (name, code, status, data_scope, created_at, updated_at) VALUES (?, ?, 'enabled', 'all', ?, ?) RETURNING id`,
    `Role of ${name}`, `r_${name}`, now, now,
  );
  await t.exec('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)', user!.id, role!.id);
  if (codes.length) {
    const seeded = await t.rows<{ permission: string }>('SELECT DISTINCT permission FROM menus WHERE permission IN (SELECT value FROM json_each(?))', JSON.stringify(codes));
    const missing = codes.filter((c) => !seeded.some((s) => s.permission === c));
    if (missing.length) throw new Error(`no menu button is seeded for ${missing.join(', ')}`);
    await t.exec('INSERT INTO role_menu (role_id, menu_id) SELECT ?, id FROM menus WHERE permission IN (SELECT value FROM json_each(?))', role!.id, JSON.stringify(codes));
  }
  const token = await t.login(name, password);
  return { token, userId: user!.id, roleId: role!.id, loginName: name, name };
}

/** A second enabled super admin (holding role 1), with a token. */
export async function superAdmin(t: AnyTestApp, adminToken: string, name = `super${++seq}`) {
  const user = await t.call('POST', '/app/sysUser/add', { token: adminToken, body: { loginName: name, password: USER_PASSWORD, roleIds: [1] } });
  if (user.status !== 200) throw new Error(`user add failed: ${user.status} ${user.json.msg}`);
  return { userId: user.data.id as number, token: await t.login(name, USER_PASSWORD), loginName: name };
}

/** Rows of tables as plain objects, to compare before/after a refused request. */
export function snapshot(t: BunTestApp, ...tables: string[]): string;
export function snapshot(t: AnyTestApp, ...tables: string[]): Maybe<string>;
export function snapshot(t: AnyTestApp, ...tables: string[]): Maybe<string> {
  const each = tables.map((table) => query<unknown, string[]>(t, `SELECT * FROM ${table}`, [], (rows) => rows.map((r) => JSON.stringify(r)).sort()));
  const shape = (all: string[][]) => JSON.stringify(all);
  return each.some((e) => e instanceof Promise) ? Promise.all(each).then(shape) : shape(each as string[][]);
}

/** Number of enabled users holding the enabled superAdmin role. */
export function enabledSuperAdmins(t: BunTestApp): number;
export function enabledSuperAdmins(t: AnyTestApp): Maybe<number>;
export function enabledSuperAdmins(t: AnyTestApp): Maybe<number> {
  return query<{ n: number }, number>(
    t,
    `SELECT count(*) AS n FROM users u JOIN user_role ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
     WHERE u.status = 'enabled' AND r.status = 'enabled' AND r.code = 'superAdmin'`,
    [],
    (rows) => rows[0]!.n,
  );
}

/**
 * Runs `fn` with a barrier in front of deps.atomic: each write waits until `parties` writes have
 * arrived, so concurrent requests all make their early checks before any of them writes — the
 * worst interleaving for check-then-write code. If they have not all arrived within 10 s the
 * writes are let through and the helper THROWS after `fn`: a race test whose requests did not
 * overlap must fail, not pass as a sequential run. Returns how many writes arrived.
 */
export async function withWriteBarrier<T>(t: AnyTestApp, parties: number, fn: () => Promise<T>): Promise<{ result: T; writes: number }> {
  const atomic = t.deps.atomic;
  const waiting: (() => void)[] = [];
  let writes = 0;
  let missed = 0;
  t.deps.atomic = async (q) => {
    if (isOpLogRecord(q)) return atomic(q);
    writes++;
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length === parties) for (const go of waiting.splice(0)) go();
      else if (waiting.length === 1) {
        setTimeout(() => {
          if (waiting.length === 0) return;
          missed += waiting.length;
          for (const go of waiting.splice(0)) go();
        }, 10_000);
      }
    });
    return atomic(q);
  };
  try {
    const result = await fn();
    if (missed > 0) throw new Error(`write barrier: ${missed} write(s) waited 10 s without the other ${parties - 1} party(ies): the race did not overlap`);
    return { result, writes };
  } finally {
    t.deps.atomic = atomic;
  }
}

/**
 * Runs `change` (a write behind the app's back) once, just before the next deps.atomic batch: after
 * the request's early checks, before its write — the interleaving a guard inside the batch must
 * catch. Returns `ran()` (did the change happen? a race test must assert it) and `restore()`.
 */
export function onceBeforeWrite(t: AnyTestApp, change: () => Promise<unknown>) {
  const atomic = t.deps.atomic;
  let ran = false;
  t.deps.atomic = async (q) => {
    if (!ran) {
      ran = true;
      await change();
    }
    return atomic(q);
  };
  return { ran: () => ran, restore: () => void (t.deps.atomic = atomic) };
}
