import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';

// SQLITE_EXCLUSIVE: whether another process may read the database file while the server runs.
describe('SQLITE_EXCLUSIVE', () => {
  const read = (path: string) => {
    const other = new Database(path);
    try {
      other.run('PRAGMA busy_timeout = 0');
      return other.query('SELECT count(*) AS n FROM roles').get();
    } finally {
      other.close();
    }
  };
  test('exclusive: another process cannot read the file while the server holds it', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'excl-')), 'a.db');
    const db = openSqlite(path, { exclusive: true });
    migrate(db);
    db.query('SELECT 1 FROM roles').get();
    expect(() => read(path)).toThrow(/locked/);
    db.close();
    expect(read(path)).toEqual({ n: 1 });
  });
  test('shared: another process can read while the server runs', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'shared-')), 'a.db');
    const db = openSqlite(path, { exclusive: false });
    migrate(db);
    expect(read(path)).toEqual({ n: 1 });
    db.close();
  });
});
