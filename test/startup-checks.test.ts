import { describe, expect, test } from 'bun:test';
import type { SqlExec } from '../src/adapters/server/sqlite-binding.ts';
import { checkIntegrity } from '../src/entry/startup-checks.ts';
import { StartupError } from '../src/entry/startup-errors.ts';

/**
 * The start-up integrity check on what SQLite's check reports (issue 26: a database whose check
 * reports exactly ONE problem must not be served either). A stand-in for the database answers the
 * size and the check's rows; the real file cases run in server-lifecycle.test.ts.
 */
function reporting(rows: string[], bytes = 4096): SqlExec {
  return {
    exec() {},
    query<T>(sql: string) {
      if (sql.includes('page_count')) return [{ n: bytes }] as T[];
      if (/PRAGMA (quick|integrity)_check/.test(sql)) return rows.map((r) => ({ quick_check: r })) as T[];
      return [] as T[];
    },
  };
}

describe('checkIntegrity', () => {
  test('"ok" passes', () => {
    expect(checkIntegrity(reporting(['ok']), 'quick', '/data/admin.db')).toMatchObject({ scope: 'whole' });
  });

  for (const mode of ['quick', 'full'] as const) {
    test(`${mode}: exactly one problem refuses the database`, () => {
      const one = () => checkIntegrity(reporting(['row 5 missing from index users_login_name']), mode, '/data/admin.db');
      expect(one).toThrow(StartupError);
      expect(one).toThrow(/DATABASE_PATH=\/data\/admin\.db failed its (quick|integrity)_check \(row 5 missing from index users_login_name\)/);
    });
    test(`${mode}: several problems, or none reported at all, refuse it too`, () => {
      expect(() => checkIntegrity(reporting(['a', 'b']), mode, '/data/admin.db')).toThrow(StartupError);
      expect(() => checkIntegrity(reporting([]), mode, '/data/admin.db')).toThrow(StartupError);
    });
  }

  test('the bounded quick check refuses one problem in one table', () => {
    const db: SqlExec = {
      exec() {},
      query<T>(sql: string) {
        if (sql.includes('page_count')) return [{ n: 2 ** 30 }] as T[];
        if (sql.includes('sqlite_master')) return [{ name: 'users' }, { name: 'op_log' }, { name: 'roles' }] as T[];
        if (sql.includes('"roles"')) return [{ quick_check: 'page 7: btreeInitPage() returns error code 11' }] as T[];
        return [{ quick_check: 'ok' }] as T[];
      },
    };
    expect(() => checkIntegrity(db, 'quick', '/data/admin.db', 256)).toThrow(/btreeInitPage/);
  });
});
