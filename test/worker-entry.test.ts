import { afterEach, beforeEach, describe, expect, spyOn, test } from 'bun:test';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import { createWorker } from '../src/entry/worker-handler.ts';
import { d1Shim } from './support/d1-shim.ts';

// The Worker's handlers under Bun over a D1-shaped shim: configuration errors, the admin
// bootstrap rules and the cron handler. The same handlers run in workerd in test/e2e/.
const SECRET = 'worker-secret-worker-secret-worker-secret-42';
const PASSWORD = 'Correct-Horse-42';

function env(vars: Record<string, unknown> = {}) {
  const sqlite = openSqlite(':memory:');
  migrate(sqlite);
  return { sqlite, env: { DB: d1Shim(sqlite), CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', JWT_SECRET: SECRET, ...vars } };
}

let lines: string[] = [];
let spies: { mockRestore(): void }[] = [];
beforeEach(() => {
  lines = [];
  spies = [
    spyOn(console, 'log').mockImplementation((l: unknown) => void lines.push(String(l))),
    spyOn(console, 'error').mockImplementation((l: unknown) => void lines.push(String(l))),
    spyOn(console, 'warn').mockImplementation((l: unknown) => void lines.push(String(l))),
  ];
});
afterEach(() => spies.forEach((s) => s.mockRestore()));

const req = (path: string, init: RequestInit = {}) => new Request(`http://worker.test${path}`, init);
const loginReq = (headers: Record<string, string> = {}) =>
  req('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ loginName: 'admin', password: PASSWORD }),
  });

describe('worker entry', () => {
  test.each([
    [{ JWT_SECRET: undefined }, 'JWT_SECRET'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ TOKEN_TTL_SECONDS: 'soon' }, 'TOKEN_TTL_SECONDS'],
    [{ DB: undefined }, 'DB'],
    [{ ADMIN_PASSWORD: 'password' }, 'ADMIN_PASSWORD'],
  ])('bad configuration %p: every request gets a 500 envelope and a log line naming %s', async (vars, name) => {
    const { env: e } = env({ ADMIN_PASSWORD: PASSWORD, ...vars });
    const worker = createWorker();
    for (const path of ['/health', '/auth/captcha']) {
      const res = await worker.fetch(req(path), e);
      expect(res.status).toBe(500);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ status: 500, msg: 'Internal server error', data: null });
      expect(res.headers.get('x-trace-id')).toBe(body.traceId);
    }
    const logged = lines.filter((l) => l.includes('Invalid configuration'));
    expect(logged.length).toBe(2);
    expect(logged[0]).toContain(name);
  });

  test('without ADMIN_PASSWORD on an empty database: no generated password, a clear error, still serving', async () => {
    const { env: e, sqlite } = env();
    const worker = createWorker();
    expect((await worker.fetch(req('/health'), e)).status).toBe(200);
    expect((sqlite.query('SELECT count(*) AS n FROM users').get() as { n: number }).n).toBe(0);
    expect(lines.some((l) => l.includes('"level":"error"') && l.includes('ADMIN_PASSWORD is not set'))).toBe(true);
  });

  test('the admin is created once from ADMIN_PASSWORD, even with parallel first requests; login records CF client facts', async () => {
    const { env: e, sqlite } = env({ ADMIN_PASSWORD: PASSWORD, TRUST_PROXY: 'true' }); // ignored on Workers
    const worker = createWorker();
    const first = await Promise.all([worker.fetch(req('/health'), e), worker.fetch(req('/health'), e)]);
    expect(first.map((r) => r.status)).toEqual([200, 200]);
    expect(sqlite.query('SELECT id, login_name FROM users').all()).toEqual([{ id: 1, login_name: 'admin' }]);

    const login = loginReq({ 'cf-connecting-ip': '198.51.100.7', 'x-forwarded-for': '10.0.0.1' });
    Object.defineProperty(login, 'cf', { value: { country: 'DE', city: 'Berlin' } });
    const res = await worker.fetch(login, e);
    expect(res.status).toBe(200);
    expect(sqlite.query('SELECT ip, country, city, status FROM login_log').all()).toEqual([
      { ip: '198.51.100.7', country: 'DE', city: 'Berlin', status: 'success' },
    ]);
    expect(lines.some((l) => l.includes('TRUST_PROXY is ignored on Workers'))).toBe(true);
    // A second isolate over the same database finds the admin and creates nothing.
    const other = createWorker();
    expect((await other.fetch(loginReq(), e)).status).toBe(200);
    expect((sqlite.query('SELECT count(*) AS n FROM users').get() as { n: number }).n).toBe(1);
  }, 30_000); // two logins with WASM argon2id at production cost: seconds on a loaded machine

  test('an unmigrated D1 database: a clear log line, the bootstrap is retried on the next request', async () => {
    const sqlite = openSqlite(':memory:');
    const e = { DB: d1Shim(sqlite), LOG_REQUESTS: 'false', JWT_SECRET: SECRET, ADMIN_PASSWORD: PASSWORD };
    const worker = createWorker();
    expect((await worker.fetch(req('/health'), e)).status).toBe(200);
    expect(lines.filter((l) => l.includes('are the D1 migrations applied?')).length).toBe(1);
    migrate(sqlite);
    expect((await worker.fetch(req('/health'), e)).status).toBe(200);
    expect(sqlite.query('SELECT login_name FROM users').all()).toEqual([{ login_name: 'admin' }]);
  });

  test('the cron handler ticks the jobs table: due cleanups purge expired captchas and sessions and apply LOG_RETENTION_DAYS', async () => {
    const { env: e, sqlite } = env({ ADMIN_PASSWORD: PASSWORD, LOG_RETENTION_DAYS: '30' });
    const worker = createWorker();
    expect((await worker.fetch(loginReq(), e)).status).toBe(200);
    const long = '2000-01-01T00:00:00.000Z';
    sqlite.run(`INSERT INTO captchas (key, answer_hash, ip, expires_at, created_at) VALUES ('k', 'h', '', '${long}', '${long}')`);
    sqlite.run(`UPDATE sessions SET expires_at = '${long}'`);
    // Log rows are append-only (their counted columns cannot change, migration 0011): old copies instead.
    sqlite.run(`INSERT INTO login_log (login_name, user_id, status, msg, created_at) SELECT login_name, user_id, status, msg, '${long}' FROM login_log`);
    sqlite.run(`DELETE FROM login_log WHERE created_at <> '${long}'`);
    // The seeded schedules start at the migration: let them start a day earlier, so each is due.
    sqlite.run(`UPDATE jobs SET schedule_from = '${new Date(Date.now() - 25 * 3_600_000).toISOString()}'`);
    await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, e);
    for (const table of ['captchas', 'sessions', 'login_log']) {
      expect((sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n).toBe(0);
    }
    // Each cleanup job ran once and left its row; the backup job reports what sysBackup answers on Workers.
    const runs = sqlite.query('SELECT job_name, status, message FROM job_log ORDER BY id').all() as { job_name: string; status: string; message: string }[];
    expect(runs.map((r) => r.status)).toEqual(['success', 'success', 'success', 'failure']);
    expect(runs[0]!.message).toContain('captchas 1');
    expect(runs[3]!.message).toContain('D1 Time Travel');
    expect(lines.some((l) => l.includes('"msg":"jobs"') && l.includes('captchas 1'))).toBe(true);
    // The same minute again: every due time ran already, nothing runs twice.
    await worker.scheduled({ cron: '* * * * *', scheduledTime: Date.now() }, e);
    expect(sqlite.query('SELECT count(*) AS n FROM job_log').get()).toEqual({ n: 4 });
  });
});
