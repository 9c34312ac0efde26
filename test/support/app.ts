import type { Database as Sqlite } from 'bun:sqlite';
import { createApp } from '../../src/app';
import { configWith } from '../../src/config';
import type { Deps } from '../../src/deps';
import { createKeys } from '../../src/core/keys';
import { jsonLogger } from '../../src/core/log';
import type { PasswordHasher } from '../../src/core/ports';
import { nodeArgon2Hasher } from '../../src/adapters/bun/argon2';
import { diskBlobStore } from '../../src/adapters/bun/disk-blobs';
import { scratchDir } from './tmp-root';
import { migrate } from '../../src/adapters/bun/migrate';
import { bunAtomic, bunKysely, bunRead, openSqlite } from '../../src/adapters/bun/sqlite';
import { bootstrapAdmin } from '../../src/modules/users/bootstrap';
import { classifyServerError } from '../../src/adapters/server/storage';

export const ADMIN_PASSWORD = 'Correct-Horse-42';

/** A clock tests can move. */
export function testClock(start = Date.parse('2026-11-22T00:00:00.000Z')) {
  let t = start;
  return { now: () => t, set: (ms: number) => void (t = ms), advance: (ms: number) => void (t += ms) };
}

/** Cheap argon2id for tests that do not measure login timing or lockout cost. */
export const fastHasher = () => nodeArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });

export interface TestAppOptions {
  env?: Record<string, string>;
  hasher?: PasswordHasher;
  /** Lines the JSON logger wrote, for assertions on error logging. */
  logLines?: string[];
  /** A database file instead of ':memory:' (for tests that need a second connection). */
  databasePath?: string;
}

/**
 * A fresh app over its own in-memory database with migrations applied and the admin bootstrapped.
 * The socket address is taken from the X-Test-Ip header (default 127.0.0.1) so tests can act as
 * several clients.
 */
export async function makeTestApp(opts: TestAppOptions = {}) {
  const config = configWith({ CAPTCHA_ENABLED: 'false', ADMIN_PASSWORD, LOG_REQUESTS: 'false', ...opts.env });
  const sqlite: Sqlite = openSqlite(opts.databasePath ?? ':memory:', { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS });
  migrate(sqlite);
  const db = bunKysely(sqlite);
  const clock = testClock();
  // Blobs go to a fresh folder per app (removed after the run by test/support/teardown.ts).
  const filesDir = scratchDir('files');
  const lines = opts.logLines ?? [];
  const deps: Deps = {
    config,
    db,
    atomic: bunAtomic(sqlite),
    read: bunRead(sqlite),
    hasher: opts.hasher ?? fastHasher(),
    blobs: diskBlobStore(filesDir),
    clock,
    ids: { uuid: () => crypto.randomUUID() },
    log: jsonLogger('debug', (l) => lines.push(l)),
    keys: createKeys(new TextEncoder().encode('test-secret-test-secret-test-secret-0123')),
    client: { socketAddress: (c) => c.req.header('x-test-ip') ?? '127.0.0.1' },
    classifyError: classifyServerError,
  };
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
    const res = await app.request(path, { method, headers, body });
    const json = (await res.json()) as { status: number; msg: string; data: any; traceId: string };
    return { res, status: res.status, json, data: json.data };
  }

  async function login(loginName = 'admin', password = ADMIN_PASSWORD, headers: Record<string, string> = {}) {
    const r = await call('POST', '/auth/login', { body: { loginName, password }, headers });
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.json.msg}`);
    return r.data.token as string;
  }

  const count = (table: string) => (sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

  return { app, deps, db, sqlite, clock, call, login, count, logLines: lines, filesDir };
}

export type TestApp = Awaited<ReturnType<typeof makeTestApp>>;
