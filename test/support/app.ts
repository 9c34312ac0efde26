import type { Database as Sqlite } from 'bun:sqlite';
import { beforeAll, describe } from 'bun:test';
import { createApp } from '../../src/app.ts';
import { configWith } from '../../src/config.ts';
import type { Deps } from '../../src/deps.ts';
import { jsonLogger } from '../../src/core/log.ts';
import type { BlobStore, PasswordHasher } from '../../src/core/ports.ts';
import { nodeArgon2Hasher } from '../../src/adapters/server/argon2.ts';
import { diskBlobStore } from '../../src/adapters/server/disk-blobs.ts';
import { scratchDir } from './tmp-root.ts';
import { migrate } from '../../src/adapters/bun/migrate.ts';
import { bunSqliteBinding, openSqlite } from '../../src/adapters/bun/sqlite.ts';
import { serverDeps } from '../../src/adapters/server/deps.ts';
import { workersDeps } from '../../src/adapters/workers/deps.ts';
import type { D1Database } from '../../src/adapters/workers/bindings.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { freshD1 } from './workerd.ts';
import { bootstrapAdmin } from '../../src/modules/users/bootstrap.ts';
import { Runner } from '../../src/db/runner.ts';
import type { Caller } from '../../src/core/caller.ts';

export const ADMIN_PASSWORD = 'Correct-Horse-42';

/** A clock tests can move. */
export function testClock(start = Date.parse('2026-11-22T00:00:00.000Z')) {
  let t = start;
  return { now: () => t, set: (ms: number) => void (t = ms), advance: (ms: number) => void (t += ms) };
}

/** Cheap argon2id for tests that do not measure login timing or lockout cost. */
export const fastHasher = () => nodeArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });

/** Where a test app keeps its data: bun:sqlite in memory, or a real D1 database in workerd. */
export type Runtime = 'bun' | 'd1';
/** Every runtime, for suites that run one body per runtime: `for (const runtime of RUNTIMES) describe(runtime, …)`. */
export const RUNTIMES: readonly Runtime[] = ['bun', 'd1'];

/**
 * Time for a beforeAll that makes a D1 test app: the first one in a process starts workerd, which
 * takes seconds on a busy machine (hooks otherwise time out after 5 s).
 */
export const D1_START_MS = 60_000;

/**
 * Runs `suite` once per runtime (bun:sqlite, and a real D1 in workerd), the way Kysely runs its
 * tests per dialect: before it, a fresh app with the admin logged in is handed to `ready`.
 */
export function perRuntime(ready: (t: AnyTestApp, admin: string) => void, suite: () => void): void {
  for (const runtime of RUNTIMES) {
    describe(runtime, () => {
      beforeAll(async () => {
        const t = await makeTestApp({ runtime });
        ready(t, await t.login());
      }, D1_START_MS);
      suite();
    });
  }
}

export interface TestAppOptions {
  /** 'bun' (the default) or 'd1'. */
  runtime?: Runtime;
  env?: Record<string, string>;
  hasher?: PasswordHasher;
  /** Lines the JSON logger wrote, for assertions on error logging. */
  logLines?: string[];
  /** Bun only: a database file instead of ':memory:' (for tests that need a second connection). */
  databasePath?: string;
  /** The blob store instead of a fresh folder on disk (e.g. the R2 adapter over test/support/fake-r2.ts). */
  blobs?: BlobStore;
  /** D1 only: what the app gets instead of the fresh D1 database (e.g. a lagging replica pair). */
  wrapD1?: (fresh: D1Database) => D1Database | Promise<D1Database>;
}

type SqlValue = string | number | null;

/** Plain SQL on the test app's database, on either runtime. */
type RowsOf = <T>(sql: string, params: SqlValue[]) => Promise<T[]>;

const TEST_SECRET = 'test-secret-test-secret-test-secret-0123';

/**
 * A fresh app over its own database with migrations applied and the admin bootstrapped: bun:sqlite
 * in memory by default, or with `runtime: 'd1'` an empty D1 database in workerd (test/support/workerd.ts)
 * behind the Workers adapters (D1 dialect, batch-based atomic). The socket address is taken from
 * the X-Test-Ip header (default 127.0.0.1) so tests can act as several clients.
 */
export async function makeTestApp(opts?: TestAppOptions & { runtime?: 'bun' }): Promise<BunTestApp>;
export async function makeTestApp(opts: TestAppOptions & { runtime: 'd1' }): Promise<D1TestApp>;
export async function makeTestApp(opts: TestAppOptions): Promise<AnyTestApp>;
export async function makeTestApp(opts: TestAppOptions = {}): Promise<AnyTestApp> {
  const config = configWith({ CAPTCHA_ENABLED: 'false', ADMIN_PASSWORD, LOG_REQUESTS: 'false', ...opts.env });
  const clock = testClock();
  // Blobs go to a fresh folder per app (removed after the run by test/support/teardown.ts).
  const filesDir = scratchDir('files');
  const lines = opts.logLines ?? [];
  // The runtime's own deps factory, with what tests pin: the clock, a cheap hasher, scratch blobs,
  // captured logs and the client address from X-Test-Ip (each runtime keeps its own error classifier).
  const pinned: Partial<Deps> = {
    hasher: opts.hasher ?? fastHasher(),
    blobs: opts.blobs ?? diskBlobStore(filesDir),
    clock,
    log: jsonLogger('debug', (l) => lines.push(l)),
    client: { socketAddress: (req) => req.headers.get('x-test-ip') ?? '127.0.0.1' },
  };
  let sqlite: Sqlite | undefined;
  let d1: D1Database | undefined;
  let deps: Deps;
  let rowsOf: RowsOf;
  if (opts.runtime === 'd1') {
    const fresh = await freshD1();
    const db1 = (d1 = opts.wrapD1 ? await opts.wrapD1(fresh) : fresh);
    deps = workersDeps({ config, d1: db1, secret: TEST_SECRET }, pinned);
    rowsOf = async <T>(sql: string, params: SqlValue[]) => ((await db1.prepare(sql).bind(...params).all<T>()).results ?? []) as T[];
  } else {
    const lite = (sqlite = openSqlite(opts.databasePath ?? ':memory:', { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS }));
    migrate(lite);
    deps = serverDeps({ config, sqlite: bunSqliteBinding(lite), secret: new TextEncoder().encode(TEST_SECRET), client: pinned.client! }, pinned);
    rowsOf = async <T>(sql: string, params: SqlValue[]) => lite.query(sql).all(...params) as T[];
  }
  const { db } = deps;
  await bootstrapAdmin(deps);
  const app = createApp(deps);

  async function call(method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await request(path, { method, headers, body });
    const json = (await res.json()) as { status: number; msg: string; data: any; traceId: string };
    return { res, status: res.status, json, data: json.data };
  }

  /**
   * app.request as the runtime runs it. On D1 the app runs as on Workers: work handed to waitUntil
   * (the op-log row) finishes after the response, and the test waits for it (before the body is
   * read) the way workerd would keep the request alive.
   */
  async function request(path: string, init: RequestInit): Promise<Response> {
    const after: Promise<unknown>[] = [];
    const ctx = d1 ? { waitUntil: (p: Promise<unknown>) => void after.push(p), passThroughOnException() {}, props: {} } : undefined;
    const res = await app.request(path, init, undefined, ctx as never);
    await Promise.all(after);
    return res;
  }

  async function login(loginName = 'admin', password = ADMIN_PASSWORD, headers: Record<string, string> = {}) {
    const r = await call('POST', '/auth/login', { body: { loginName, password }, headers });
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.json.msg}`);
    return r.data.token as string;
  }

  /** Rows of a plain SQL query on the app's database, on either runtime. */
  const rows = <T = Record<string, any>>(sql: string, ...params: SqlValue[]) => rowsOf<T>(sql, params);
  /** The first row, or null. */
  const row = async <T = Record<string, any>>(sql: string, ...params: SqlValue[]) => (await rows<T>(sql, ...params))[0] ?? null;
  /** A write straight to the database, behind the app's back (races, corrupt rows). */
  const exec = async (sql: string, ...params: SqlValue[]) => void (await rows(sql, ...params));
  const base = { app, deps, db, clock, call, request, login, rows, row, exec, logLines: lines, filesDir };

  if (d1) {
    const count = async (table: string) => (await row<{ n: number }>(`SELECT count(*) AS n FROM ${table}`))!.n;
    return { ...base, runtime: 'd1', d1, count };
  }
  const lite = sqlite!;
  const count = (table: string) => (lite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  return { ...base, runtime: 'bun', sqlite: lite, count };
}

interface TestAppBase {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  db: Kysely<Database>;
  clock: ReturnType<typeof testClock>;
  call(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ res: Response; status: number; json: { status: number; msg: string; data: any; traceId: string }; data: any }>;
  /** app.request as the runtime runs it (on D1: with an execution context whose waitUntil work is awaited). */
  request(path: string, init: RequestInit): Promise<Response>;
  login(loginName?: string, password?: string, headers?: Record<string, string>): Promise<string>;
  /** Rows of a plain SQL query on the app's database, on either runtime. */
  rows<T = Record<string, any>>(sql: string, ...params: SqlValue[]): Promise<T[]>;
  /** The first row of a plain SQL query, or null. */
  row<T = Record<string, any>>(sql: string, ...params: SqlValue[]): Promise<T | null>;
  /** A write straight to the database, behind the app's back (races, corrupt rows). */
  exec(sql: string, ...params: SqlValue[]): Promise<void>;
  logLines: string[];
  filesDir: string;
}

/** A test app over bun:sqlite: its database can also be read synchronously. */
export interface BunTestApp extends TestAppBase {
  runtime: 'bun';
  sqlite: Sqlite;
  count(table: string): number;
}

/** A test app over a real D1 database in workerd. */
export interface D1TestApp extends TestAppBase {
  runtime: 'd1';
  d1: D1Database;
  count(table: string): Promise<number>;
}

/** A test app on either runtime: suites that run on both use `await t.count(…)`, `t.rows(…)`. */
export type AnyTestApp = BunTestApp | D1TestApp;
/** The Bun test app (what `makeTestApp()` without a runtime returns). */
export type TestApp = BunTestApp;

/**
 * Runs `sql` right before the app's `nth` atomic batch from now (1: the next one), then lets that
 * batch run: a race made at an exact point of a request. Returns the undo (for a batch never reached).
 */
export function beforeBatch(t: AnyTestApp, nth: number, sql: string, ...params: (string | number)[]): () => void {
  const atomic = t.deps.atomic;
  let seen = 0;
  t.deps.atomic = async (q) => {
    if (++seen === nth) {
      t.deps.atomic = atomic;
      await t.exec(sql, ...params);
    }
    return atomic(q);
  };
  return () => void (t.deps.atomic = atomic);
}

/**
 * A request's runner over `deps` acting as `caller`, for tests that call services directly (e.g. to
 * let a concurrent change land between a check and its write): the caller is taken as judged, and
 * their check adds no guards (the test is about the service's own rules).
 */
export function runnerAs(deps: Deps, caller: Caller): Runner {
  const run = new Runner(deps);
  run.authenticate({
    userId: caller.userId,
    sessionId: caller.sessionId,
    statements: [{ sql: 'SELECT 1 AS one', parameters: [] }],
    judge: () => ({ caller }),
    guards: () => [],
    openGuards: () => [],
  });
  return run;
}

/** An atomic batch that only records the request's op-log row (written after the handler, outside its plan). */
export const isOpLogRecord = (batch: readonly { sql: string }[]) => batch.length === 1 && /^insert into "op_log"/.test(batch[0]!.sql);
