// `npx bun bench/read-transaction.ts`: what a guarded read's statements cost in SQLite alone
// (no HTTP, no app), one by one and inside one read transaction (readManyNow), on ':memory:', a
// shared WAL file (the server's default) and an exclusive one (SQLITE_EXCLUSIVE=true): why
// src/adapters/server/sqlite-binding.ts reads a request's statements in one transaction.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUTH_HOLDS_SQL, AUTH_SESSION_SQL } from '../src/access/auth-statement.ts';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import { readManyNow } from '../src/adapters/server/sqlite-binding.ts';
import { FIND_USER_SQL } from '../src/modules/users/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'read-tx-'));
const N = 40_000;
const perCall = (fn: () => void) => {
  for (let i = 0; i < 3000; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) fn();
  return ((performance.now() - t0) * 1000) / N;
};

for (const [label, path, exclusive] of [
  [':memory:', ':memory:', false],
  ['WAL file, shared', join(dir, 'shared.db'), false],
  ['WAL file, exclusive', join(dir, 'exclusive.db'), true],
] as const) {
  const db = openSqlite(path, { exclusive });
  migrate(db);
  db.run(`INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at) VALUES ('admin', 'x', 'Admin', 'enabled', '2026', '2026')`);
  db.run(`INSERT INTO sessions (id, user_id, login_at, expires_at) VALUES ('s1', 1, '2026-01-01', '2099-01-01')`);
  const version = (db.query(`SELECT n FROM cache_versions WHERE name = 'menus'`).get() as { n: number }).n;
  const reads = [
    { sql: AUTH_SESSION_SQL, parameters: ['s1', 1, '2026-11-27T00:00:00.000Z'] },
    { sql: AUTH_HOLDS_SQL, parameters: ['sys:user:detail', 1, version] },
    { sql: FIND_USER_SQL, parameters: [1] },
  ];
  const now = <T>(sql: string, params: readonly unknown[]) => db.query(sql).all(...(params as [])) as T[];
  const exec = (sql: string) => void db.query(sql).run();
  const inOne = readManyNow(now, exec, () => db.inTransaction);
  const each = perCall(() => reads.map((r) => now(r.sql, r.parameters)));
  const together = perCall(() => inOne(reads));
  console.log(`${label.padEnd(20)} 3 reads one by one ${each.toFixed(2)} µs, in one read transaction ${together.toFixed(2)} µs (${(together / each).toFixed(2)}×)`);
  db.close();
}
