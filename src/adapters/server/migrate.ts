import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SqlExec } from './sqlite-binding.ts';

/** The table `wrangler d1 migrations apply` keeps, so either tool can take over from the other. */
const TRACKING_TABLE = `CREATE TABLE IF NOT EXISTS d1_migrations(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations', import.meta.url));

const migrationFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();

/**
 * Applied migrations (in `d1_migrations`) that are not among this release's files: the database was
 * migrated by a newer release, and this code may misread it. [] for a fresh database.
 */
export function unknownMigrations(db: SqlExec, dir = MIGRATIONS_DIR): string[] {
  const tracked = db.query<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'")[0]?.n;
  if (!tracked) return [];
  const known = new Set(migrationFiles(dir));
  return db
    .query<{ name: string }>('SELECT name FROM d1_migrations ORDER BY id')
    .map((r) => r.name)
    .filter((name) => !known.has(name));
}

/**
 * Applies migrations/NNNN_*.sql in name order, each in its own transaction together with its
 * tracking row: a migration that fails half-way leaves nothing behind. Returns the names applied.
 * Takes only exec/query, so the same code migrates through bun:sqlite and node:sqlite.
 */
export function migrate(db: SqlExec, dir = MIGRATIONS_DIR): string[] {
  db.exec(TRACKING_TABLE);
  const applied = new Set(db.query<{ name: string }>('SELECT name FROM d1_migrations').map((r) => r.name));
  const files = migrationFiles(dir);
  const done: string[] = [];
  for (const name of files) {
    if (applied.has(name)) continue;
    const sql = readFileSync(`${dir}/${name}`, 'utf8');
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(sql);
      db.query('INSERT INTO d1_migrations (name) VALUES (?)', [name]);
      db.exec('COMMIT');
    } catch (e) {
      // SQLite may already have rolled back (e.g. on SQLITE_FULL); the first error is the one to report.
      try {
        db.exec('ROLLBACK');
      } catch {}
      throw e;
    }
    done.push(name);
  }
  return done;
}
