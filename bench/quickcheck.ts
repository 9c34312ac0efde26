/**
 * `npm run bench -- quickcheck`: how long the start-up `quick_check` takes on a big database
 * (STARTUP_CHECK=quick, the default). Builds a file of QC_TARGET_MB (default 1024) of login-log and
 * op-log rows shaped like production ones (generated inside SQLite, so it takes a minute, not an
 * hour), then times checkIntegrity() — the start-up code itself — cold (the file's pages evicted from
 * the OS cache with posix_fadvise, as after a reboot) and warm: the whole `quick_check`
 * (STARTUP_CHECK_MAX_MB=0), the bounded one start-up runs by default, and `integrity_check`
 * (STARTUP_CHECK=full) for comparison. QC_DIR picks the folder (default the OS temp folder); the
 * file is removed afterwards unless QC_KEEP=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { bunSqlExec, openSqlite } from '../src/adapters/bun/sqlite.ts';
import { checkIntegrity } from '../src/entry/startup-checks.ts';

const CHUNK = 250_000;

function fill(path: string, targetBytes: number) {
  const db = openSqlite(path);
  migrate(db);
  const login = db.prepare(`INSERT INTO login_log (login_name, user_id, status, msg, ip, user_agent, browser, os, country, city, trace_id, created_at)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CHUNK})
    SELECT printf('user%06d', abs(random()) % 100000), abs(random()) % 100000,
      CASE WHEN abs(random()) % 8 = 0 THEN 'failure' ELSE 'success' END,
      CASE WHEN abs(random()) % 8 = 0 THEN 'Wrong login name or password' ELSE 'Login succeeded' END,
      printf('10.%d.%d.%d', abs(random()) % 256, abs(random()) % 256, 1 + abs(random()) % 254),
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      'Chrome 126', 'Windows 10', 'DE', 'Berlin', lower(hex(randomblob(16))),
      strftime('%Y-%m-%dT%H:%M:%fZ', ?1 + i * 7, 'unixepoch')
    FROM n`);
  const op = db.prepare(`INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, error_msg, duration_ms, trace_id, created_at)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CHUNK})
    SELECT 'sys' || (CASE abs(random()) % 5 WHEN 0 THEN 'User' WHEN 1 THEN 'Role' WHEN 2 THEN 'Menu' WHEN 3 THEN 'File' ELSE 'Org' END),
      CASE abs(random()) % 4 WHEN 0 THEN 'add' WHEN 1 THEN 'edit' WHEN 2 THEN 'delete' ELSE 'changeStatus' END,
      'POST', '/app/sysUser/edit', 1 + abs(random()) % 1000, printf('user%06d', abs(random()) % 1000),
      printf('10.%d.%d.%d', abs(random()) % 256, abs(random()) % 256, 1 + abs(random()) % 254),
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      '{"id":' || (abs(random()) % 100000) || ',"nickName":"' || lower(hex(randomblob(12))) || '","email":"someone@example.com","remark":"' || lower(hex(randomblob(40))) || '"}',
      CASE WHEN abs(random()) % 20 = 0 THEN 409 ELSE 200 END, NULL, abs(random()) % 300, lower(hex(randomblob(16))),
      strftime('%Y-%m-%dT%H:%M:%fZ', ?1 + i * 7, 'unixepoch')
    FROM n`);
  const size = () => (db.query('PRAGMA page_count').get() as { page_count: number }).page_count * (db.query('PRAGMA page_size').get() as { page_size: number }).page_size;
  let base = 1_700_000_000;
  let rows = 0;
  while (size() < targetBytes) {
    db.transaction(() => {
      login.run(base);
      op.run(base);
    })();
    base += CHUNK * 7;
    rows += 2 * CHUNK;
  }
  db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return rows;
}

/** Drops the file's pages from the OS page cache (no root needed), as after a reboot. */
function evict(path: string) {
  const r = spawnSync('python3', ['-c', `import os; fd = os.open(${JSON.stringify(path)}, os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)`]);
  return r.status === 0;
}

function timed(path: string, mode: 'quick' | 'full', maxWholeMb = 0) {
  const db = openSqlite(path);
  try {
    return checkIntegrity(bunSqlExec(db), mode, path, maxWholeMb)!.ms;
  } finally {
    db.close();
  }
}

export async function run(targetMb = Number(process.env.QC_TARGET_MB ?? 1024)) {
  const dir = mkdtempSync(join(process.env.QC_DIR ?? tmpdir(), 'bench-quickcheck-'));
  const path = join(dir, 'admin.db');
  try {
    const t0 = performance.now();
    const rows = fill(path, targetMb * 2 ** 20);
    const mib = statSync(path).size / 2 ** 20;
    console.log(`\nbuilt ${mib.toFixed(0)} MiB (${rows.toLocaleString()} log rows) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    const results: Record<string, string | number>[] = [];
    for (let round = 0; round < 2; round++) {
      const cold = evict(path);
      results.push({ check: 'quick_check(10)', cache: cold ? 'cold' : 'warm (evict failed)', ms: timed(path, 'quick') });
      results.push({ check: 'quick_check(10)', cache: 'warm', ms: timed(path, 'quick') });
      evict(path);
      results.push({ check: 'bounded: every table but the logs (STARTUP_CHECK_MAX_MB=256, the default)', cache: 'cold', ms: timed(path, 'quick', 256) });
    }
    evict(path);
    results.push({ check: 'integrity_check(10)', cache: 'cold', ms: timed(path, 'full') });
    console.log(`start-up check on a ${mib.toFixed(0)} MiB database (checkIntegrity, as STARTUP_CHECK=quick|full runs it)`);
    console.table(results);
  } finally {
    if (process.env.QC_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await run(process.argv[2] ? Number(process.argv[2]) : undefined);
