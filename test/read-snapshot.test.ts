import { describe, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { bunSqliteBinding, openSqlite } from '../src/adapters/bun/sqlite.ts';
import { readManyNow } from '../src/adapters/server/sqlite-binding.ts';

// readManyNow (src/adapters/server/sqlite-binding.ts): a request's reads (its auth statement and
// its plan's) in one read transaction.
describe('reads in one read transaction', () => {
  const fileDb = () => {
    const path = join(mkdtempSync(join(tmpdir(), 'snap-')), 'a.db');
    const db = openSqlite(path, { exclusive: false });
    migrate(db);
    return { db, path };
  };
  const statements = [
    { sql: 'SELECT count(*) AS n FROM roles', parameters: [] },
    { sql: 'SELECT code FROM roles WHERE id = ?', parameters: [1] },
  ];

  test('two or more reads run inside one transaction, which is closed after; the rows of each in order', () => {
    const { db } = fileDb();
    const seen: boolean[] = [];
    const now = <T>(sql: string, params: readonly unknown[]) => (seen.push(db.inTransaction), db.query(sql).all(...(params as [])) as T[]);
    const many = readManyNow(now, (sql) => db.query(sql).run(), () => db.inTransaction);
    expect(many(statements)).toEqual([[{ n: 1 }], [{ code: 'superAdmin' }]]);
    expect(seen).toEqual([true, true]);
    expect(db.inTransaction).toBe(false);
    // One statement has nothing to share: no transaction around it.
    many([statements[0]!]);
    expect(seen.at(-1)).toBe(false);
  });

  test('a failing read rolls the transaction back and throws; the next call starts clean', () => {
    const { db } = fileDb();
    const binding = bunSqliteBinding(db);
    expect(() => binding.readManyNow!([statements[0]!, { sql: 'SELECT nope FROM roles', parameters: [] }])).toThrow(/nope/);
    expect(db.inTransaction).toBe(false);
    expect(binding.readManyNow!(statements)).toEqual([[{ n: 1 }], [{ code: 'superAdmin' }]]);
  });
});
