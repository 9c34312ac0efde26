import type { Database } from 'bun:sqlite';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The table `wrangler d1 migrations apply` keeps, so either tool can take over from the other. */
const TRACKING_TABLE = `CREATE TABLE IF NOT EXISTS d1_migrations(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`;

export const MIGRATIONS_DIR = join(import.meta.dir, '../../../migrations');

/**
 * Applies migrations/NNNN_*.sql in name order, each in its own transaction together with its
 * tracking row: a migration that fails half-way leaves nothing behind. Returns the names applied.
 */
export function migrate(sqlite: Database, dir = MIGRATIONS_DIR): string[] {
  sqlite.run(TRACKING_TABLE);
  const applied = new Set(sqlite.query<{ name: string }, []>('SELECT name FROM d1_migrations').all().map((r) => r.name));
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort();
  const done: string[] = [];
  for (const name of files) {
    if (applied.has(name)) continue;
    const sql = readFileSync(join(dir, name), 'utf8');
    sqlite.transaction(() => {
      sqlite.run(sql);
      sqlite.run('INSERT INTO d1_migrations (name) VALUES (?)', [name]);
    })();
    done.push(name);
  }
  return done;
}
