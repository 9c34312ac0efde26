import { describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_DIR, migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';

// The Bun migrator: each migration once, tracked in d1_migrations, all-or-nothing per file.
describe('migrator', () => {
  test('applies every file once, tracked in d1_migrations; a second run is a no-op', () => {
    const db = openSqlite(':memory:');
    expect(migrate(db).length).toBeGreaterThan(0);
    expect(migrate(db)).toEqual([]);
    const names = (db.query('SELECT name FROM d1_migrations').all() as { name: string }[]).map((r) => r.name);
    expect(names).toContain('0001_init.sql');
  });

  test('a migration that fails half-way leaves nothing behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mig-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    writeFileSync(join(dir, '9999_broken.sql'), 'CREATE TABLE half_done (id INTEGER);\nINSERT INTO no_such_table VALUES (1);\n');
    const db = openSqlite(':memory:');
    expect(() => migrate(db, dir)).toThrow();
    expect(db.query(`SELECT name FROM sqlite_master WHERE name = 'half_done'`).get()).toBeNull();
    expect(db.query(`SELECT name FROM d1_migrations WHERE name = '9999_broken.sql'`).get()).toBeNull();
    // The good migrations before it are kept.
    expect(db.query(`SELECT name FROM d1_migrations WHERE name = '0001_init.sql'`).get()).not.toBeNull();
  });
});
