import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { sql, type CompiledQuery } from 'kysely';
import { openBunSqlite } from '../src/adapters/bun/sqlite.ts';
import { migrate } from '../src/adapters/server/migrate.ts';
import { openNodeSqliteBinding } from '../src/adapters/server/node-sqlite.ts';
import { countSqlParams } from '../src/adapters/server/sql-params.ts';
import type { SqliteBinding } from '../src/adapters/server/sqlite-binding.ts';

// The node:sqlite binding (Node ≥ 22 and Deno) checked here through Bun's own node:sqlite; the
// e2e suite runs it on real Node and Deno. bun:sqlite is the reference it must match.

describe('countSqlParams matches SQLite (bun:sqlite paramsCount)', () => {
  const oracle = new Database(':memory:');
  oracle.run('CREATE TABLE t(a, "b?", [c?], `d?`)');
  const many = `SELECT ${Array.from({ length: 101 }, () => '?').join(', ')}`;
  test.each([
    'SELECT 1',
    'SELECT ?',
    'SELECT ?, ?, ?',
    "SELECT '?', ?",
    "SELECT 'it''s ?', ?",
    'SELECT "b?", [c?], `d?`, ? FROM t',
    'SELECT ? -- a comment with ?\n, ?',
    'SELECT ? /* ? ? */, ?',
    'SELECT ?3, ?',
    'SELECT ?2, ?1',
    'SELECT :a, :a, @b, $c, ?',
    'SELECT :a, ?, :a',
    "SELECT value FROM json_each(?) WHERE value <> '?'",
    "SELECT x'3f', ?",
    'SELECT ? -- trailing comment ?',
    many,
  ])('%s', (text) => {
    expect(countSqlParams(text)).toBe(oracle.query(text).paramsCount);
  });
});

/** Both bindings over fresh migrated in-memory databases. */
function bindings(): [string, SqliteBinding][] {
  return [
    ['bun:sqlite', openBunSqlite(':memory:', { exclusive: false })],
    ['node:sqlite', openNodeSqliteBinding(':memory:', { exclusive: false })],
  ].map(([name, b]) => {
    migrate((b as SqliteBinding).sql);
    return [name as string, b as SqliteBinding];
  });
}

describe('node:sqlite binding', () => {
  test('refuses a statement with more than 100 parameters, like D1 (Kysely, atomic and read)', async () => {
    const b = openNodeSqliteBinding(':memory:', { exclusive: false });
    migrate(b.sql);
    const ids = Array.from({ length: 101 }, (_, i) => i);
    const compiled = b.db.selectFrom('users').select('id').where('id', 'in', ids).compile();
    await expect(b.db.selectFrom('users').select('id').where('id', 'in', ids).execute()).rejects.toThrow('at most 100 bound parameters');
    await expect(b.atomic([compiled])).rejects.toThrow('at most 100 bound parameters');
    await expect(b.read(compiled.sql, compiled.parameters)).rejects.toThrow('at most 100 bound parameters');
    // 100 is fine
    expect(await b.db.selectFrom('users').select('id').where('id', 'in', ids.slice(1)).execute()).toEqual([]);
  });

  test('booleans are stored as 1/0 and array arguments bind positionally', async () => {
    const b = openNodeSqliteBinding(':memory:', { exclusive: false });
    const rows = await b.read<{ t: number; f: number; s: string }>('SELECT ? AS t, ? AS f, ? AS s', [true, false, 'x']);
    expect({ ...rows[0] }).toEqual({ t: 1, f: 0, s: 'x' });
    const q = sql<{ n: number }>`SELECT ${true} + ${2} AS n`.compile(b.db);
    expect((await b.atomic([q]))[0]!.rows.map((r) => ({ ...(r as object) }))).toEqual([{ n: 3 }]);
  });

  test('atomic is all-or-nothing: a failing statement rolls back the ones before it', async () => {
    for (const [name, b] of bindings()) {
      const before = (await b.read<{ n: number }>('SELECT count(*) AS n FROM roles', []))[0]!.n;
      const insert = sql`INSERT INTO roles (name, code, created_at, updated_at) VALUES ('r', 'r', '', '')`.compile(b.db);
      const bad = sql`INSERT INTO no_such_table VALUES (1)`.compile(b.db);
      await expect(b.atomic([insert, bad]), name).rejects.toThrow();
      expect((await b.read<{ n: number }>('SELECT count(*) AS n FROM roles', []))[0]!.n, name).toBe(before);
      // and the connection is usable again (no transaction left open)
      await b.atomic([insert]);
      expect((await b.read<{ n: number }>('SELECT count(*) AS n FROM roles', []))[0]!.n, name).toBe(before + 1);
    }
  });

  test('same results as bun:sqlite for reads, writes and RETURNING through Kysely, atomic and read', async () => {
    const results: unknown[][] = [];
    for (const [, b] of bindings()) {
      const out: unknown[] = [];
      const q = (c: CompiledQuery) => c;
      const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x)));
      out.push(plain(await b.db.selectFrom('users').select(['id', 'login_name']).execute()));
      out.push(
        plain(
          await b.atomic([
            q(sql`INSERT INTO roles (name, code, sort, created_at, updated_at) VALUES (${'a'}, ${'a'}, ${true}, '', '')`.compile(b.db)),
            q(sql`UPDATE roles SET sort = 2 WHERE code = ${'a'} RETURNING code, sort`.compile(b.db)),
            q(sql`DELETE FROM roles WHERE code = ${'nope'}`.compile(b.db)),
            q(sql`SELECT code, status FROM roles WHERE code = ${'a'}`.compile(b.db)),
          ]),
        ),
      );
      out.push(plain(await b.read('SELECT code, sort FROM roles WHERE code = ?', ['a'])));
      out.push(plain(await b.db.updateTable('roles').set({ sort: 3 }).where('code', '=', 'a').executeTakeFirst()));
      results.push(out);
    }
    expect(results[1]).toEqual(results[0]!);
  });
});
