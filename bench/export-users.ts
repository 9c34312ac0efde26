// npm run bench -- export-users — the users export end to end on Bun: 100k users (USERS) in a
// SQLite file, POST /app/sysUser/export as the super admin and as a delegated admin whose scope
// (orgAndBelow of one of 200 organisations' parent) holds about half of them, read as fast as it
// comes, XLSX and CSV, each in a fresh process: wall time, rows, bytes, and the process's RSS before
// the export and its peak (VmHWM) after (the app and the seeded database are in the baseline).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const USERS = Number(process.env.USERS ?? 100_000);
const statusKb = (field: string) => Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);

async function child(format: 'xlsx' | 'csv', as: 'super' | 'scoped', dbPath: string) {
  const { openSqlite, bunSqliteBinding } = await import('../src/adapters/bun/sqlite.ts');
  const { migrate } = await import('../src/adapters/bun/migrate.ts');
  const { serverDeps } = await import('../src/adapters/server/deps.ts');
  const { configWith } = await import('../src/config.ts');
  const { createApp } = await import('../src/app.ts');
  const { bootstrapAdmin } = await import('../src/modules/users/bootstrap.ts');
  const { nodeArgon2Hasher } = await import('../src/adapters/server/argon2.ts');
  const { jsonLogger } = await import('../src/core/log.ts');
  const config = configWith({ CAPTCHA_ENABLED: 'false', ADMIN_PASSWORD: 'Bench-Admin-Pass-1', LOG_REQUESTS: 'false', DATABASE_PATH: dbPath });
  const lite = openSqlite(dbPath, { busyTimeoutMs: 5000 });
  migrate(lite);
  const hasher = nodeArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });
  const deps = serverDeps({ config, sqlite: bunSqliteBinding(lite), secret: new TextEncoder().encode('bench-secret-bench-secret-bench-secret-0'), client: { socketAddress: () => '127.0.0.1' } }, { hasher, log: jsonLogger('error', () => {}) });
  await bootstrapAdmin(deps);
  const n = (lite.query('SELECT count(*) AS n FROM users').get() as { n: number }).n;
  if (n < USERS) {
    // 200 organisations under two parents; users spread over them; one scoped admin under parent A.
    lite.exec(`INSERT INTO orgs (parent_id, name, code, created_at, updated_at) VALUES (0, 'A', 'bench_a', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'), (0, 'B', 'bench_b', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
    lite.exec(`WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 200)
      INSERT INTO orgs (parent_id, name, code, created_at, updated_at) SELECT (SELECT id FROM orgs WHERE code = CASE WHEN k % 2 = 0 THEN 'bench_a' ELSE 'bench_b' END), 'org ' || k, 'bench_o' || k, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM i`);
    lite.exec(`INSERT INTO org_closure (ancestor_id, descendant_id, depth) SELECT id, id, 0 FROM orgs WHERE code GLOB 'bench_*'`);
    lite.exec(`INSERT INTO org_closure (ancestor_id, descendant_id, depth) SELECT parent_id, id, 1 FROM orgs WHERE code GLOB 'bench_o*'`);
    const hash = await hasher.hash('Bench-User-Pass-1');
    lite.query(`WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < ?)
      INSERT INTO users (login_name, password_hash, nick_name, email, phone, org_id, status, created_at, updated_at)
      SELECT 'bench_u' || k, ?, '用户 ' || k, 'u' || k || '@example.com', '138' || printf('%08d', k),
        (SELECT id FROM orgs WHERE code = 'bench_o' || (1 + k % 200)), CASE WHEN k % 10 = 0 THEN 'disabled' ELSE 'enabled' END,
        strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || k || ' seconds'), '2026-11-01T00:00:00.000Z' FROM i`).run(USERS, hash);
    lite.exec(`INSERT INTO roles (name, code, data_scope, created_at, updated_at) VALUES ('bench scoped', 'bench_scoped', 'orgAndBelow', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
    lite.exec(`INSERT INTO role_menu (role_id, menu_id) SELECT (SELECT id FROM roles WHERE code = 'bench_scoped'), id FROM menus WHERE permission = 'sys:user:export'`);
    lite.query(`INSERT INTO users (login_name, password_hash, nick_name, org_id, created_at, updated_at) VALUES ('bench_boss', ?, 'boss', (SELECT id FROM orgs WHERE code = 'bench_a'), '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`).run(hash);
    lite.exec(`INSERT INTO user_role (user_id, role_id) SELECT (SELECT id FROM users WHERE login_name = 'bench_boss'), id FROM roles WHERE code = 'bench_scoped'`);
    return;
  }
  const app = createApp(deps);
  const login = async (loginName: string, password: string) =>
    ((await (await app.request('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName, password }) })).json()) as any).data.token as string;
  const token = as === 'super' ? await login('admin', 'Bench-Admin-Pass-1') : await login('bench_boss', 'Bench-User-Pass-1');
  Bun.gc(true);
  const before = statusKb('VmRSS');
  const t0 = performance.now();
  const res = await app.request('/app/sysUser/export', { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ format }) });
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
  let bytes = 0;
  let lines = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (format === 'csv') for (const b of value) if (b === 10) lines++;
  }
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ format, as, ms: Math.round(ms), rows: format === 'csv' ? lines - 1 : undefined, MiB: +(bytes / 1024 / 1024).toFixed(1), rssBeforeMiB: Math.round(before / 1024), peakMiB: Math.round(statusKb('VmHWM') / 1024) }));
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'export-users-'));
  const db = join(dir, 'bench.db');
  try {
    const go = (...args: string[]) => {
      const r = spawnSync(process.execPath, [import.meta.path, '--child', ...args, db], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout.trim();
    };
    go('csv', 'super'); // seeds
    console.log(`users export, ${USERS} users (Bun ${Bun.version}), each in a fresh process:`);
    for (const as of ['super', 'scoped'] as const) for (const format of ['csv', 'xlsx'] as const) console.log('  ' + go(format, as));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as 'xlsx' | 'csv', process.argv[4] as 'super' | 'scoped', process.argv[5]!);
else if (import.meta.main) await run();
