import { Database, type SQLQueryBindings } from 'bun:sqlite';
import { Kysely, type CompiledQuery, type QueryResult } from 'kysely';
import { BunSqliteDialect } from 'kysely-bun-sqlite';
import type { Atomic, ReadNow, ReadSql } from '../../core/ports.ts';
import { LAST_WRITE_SQL, assertParamLimit, atomicResult, type LastWrite } from '../../db/statements.ts';
import type { Database as Schema } from '../../db/schema.ts';
import { readManyNow, serverPragmas, type OpenSqlite, type SqlExec, type SqliteBinding } from '../server/sqlite-binding.ts';

/** Opens (creating) a SQLite file or ':memory:' with the app's pragmas (serverPragmas). */
export function openSqlite(path: string, opts: { exclusive?: boolean; busyTimeoutMs?: number } = {}): Database {
  const sqlite = new Database(path, { create: true, strict: true });
  for (const pragma of serverPragmas(path, opts)) sqlite.run(pragma);
  return sqlite;
}

/** A cached statement, refused like D1 would refuse it when it has too many parameters. */
function statement(sqlite: Database, sql: string) {
  const stmt = sqlite.query(sql);
  assertParamLimit(stmt.paramsCount, sql);
  return stmt;
}

/**
 * Kysely over bun:sqlite. kysely-bun-sqlite calls `prepare()` for every query; handing it
 * `query()` instead makes bun:sqlite reuse one compiled statement per SQL text, which is
 * most of the per-query cost on the hot path.
 */
export function bunKysely(sqlite: Database): Kysely<Schema> {
  const cached = new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return (sql: string) => statement(target, sql);
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Kysely<Schema>({ dialect: new BunSqliteDialect({ database: cached }) });
}

const bindings = (params: readonly unknown[]) => params as SQLQueryBindings[];

/**
 * All-or-nothing on Bun: the statements run synchronously inside one SQLite transaction, so no
 * other request's statement can interleave with them (there is one connection) and any error,
 * a guard's CHECK failure included, rolls the whole batch back.
 */
export function bunAtomic(sqlite: Database): Atomic {
  const last = sqlite.query(LAST_WRITE_SQL);
  const run = sqlite.transaction((queries: readonly CompiledQuery[]) =>
    queries.map((q): QueryResult<unknown> => {
      const stmt = statement(sqlite, q.sql);
      const rows = stmt.columnNames.length > 0 ? stmt.all(...bindings(q.parameters)) : (stmt.run(...bindings(q.parameters)), []);
      return atomicResult(q, rows, () => last.get() as LastWrite);
    }),
  );
  return async (queries) => run(queries);
}

/** Plain-SQL reads through bun:sqlite's statement cache, answered at once (see ReadNow). */
export function bunReadNow(sqlite: Database): ReadNow {
  return <T>(sql: string, params: readonly unknown[]) => statement(sqlite, sql).all(...bindings(params)) as T[];
}

/** Plain-SQL reads through bun:sqlite's statement cache (see ReadSql). */
export function bunRead(sqlite: Database): ReadSql {
  const now = bunReadNow(sqlite);
  return async <T>(sql: string, params: readonly unknown[]) => now<T>(sql, params);
}

/** exec/query over bun:sqlite, for the portable migrator. */
export function bunSqlExec(sqlite: Database): SqlExec {
  return {
    exec: (sql) => sqlite.run(sql),
    query: <T>(sql: string, params: readonly unknown[] = []) => sqlite.query(sql).all(...bindings(params)) as T[],
  };
}

/** The start-up's view of one bun:sqlite database (see SqliteBinding). */
export const openBunSqlite: OpenSqlite = (path, opts) => bunSqliteBinding(openSqlite(path, opts));

/** The app's ports over an opened bun:sqlite database (what serverDeps takes). */
export function bunSqliteBinding(sqlite: Database): SqliteBinding {
  const readNow = bunReadNow(sqlite);
  return {
    db: bunKysely(sqlite),
    atomic: bunAtomic(sqlite),
    read: bunRead(sqlite),
    readNow,
    readManyNow: readManyNow(readNow, (sql) => sqlite.query(sql).run(), () => sqlite.inTransaction),
    sql: bunSqlExec(sqlite),
    close: () => sqlite.close(),
  };
}
