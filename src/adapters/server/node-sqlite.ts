import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, SqliteDialect, type CompiledQuery, type QueryResult, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type { Atomic, ReadNow, ReadSql } from '../../core/ports.ts';
import type { Database as Schema } from '../../db/schema.ts';
import { LAST_WRITE_SQL, assertParamLimit, atomicResult, type LastWrite } from '../../db/statements.ts';
import { countSqlParams } from './sql-params.ts';
import { readManyNow, serverPragmas } from './sqlite-binding.ts';
import type { OpenSqlite, SqlExec } from './sqlite-binding.ts';

/** Statements kept prepared; the app has a few hundred distinct SQL texts at most. */
const CACHE_SIZE = 1000;

/**
 * node:sqlite (Node ≥ 22.13 and Deno 2) refuses booleans (Deno; Node 26 takes them) and reads an
 * array argument as named parameters: values are passed one by one, booleans as 1/0 like
 * bun:sqlite and D1 store them.
 */
function bind(params: readonly unknown[]): SQLInputValue[] {
  return params.map((p) => (typeof p === 'boolean' ? Number(p) : (p as SQLInputValue)));
}

interface Cached {
  stmt: StatementSync;
  /** The statement returns rows (a SELECT, or a write with RETURNING). */
  reader: boolean;
}

/**
 * One prepared statement per SQL text, checked once against D1's parameter limit. node:sqlite cannot
 * count a statement's parameters, so `countSqlParams` reads them from the SQL.
 */
function statementCache(sqlite: DatabaseSync) {
  const cache = new Map<string, Cached>();
  return (sql: string): Cached => {
    let hit = cache.get(sql);
    if (hit) return hit;
    assertParamLimit(countSqlParams(sql), sql);
    const stmt = sqlite.prepare(sql);
    hit = { stmt, reader: stmt.columns().length > 0 };
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, hit);
    return hit;
  };
}

type Statement = ReturnType<ReturnType<typeof statementCache>>;

function execute(s: Statement, q: CompiledQuery, last: StatementSync): QueryResult<unknown> {
  const rows = s.reader ? s.stmt.all(...bind(q.parameters)) : (s.stmt.run(...bind(q.parameters)), []);
  return atomicResult(q, rows, () => last.get() as unknown as LastWrite);
}

/** Opens (creating) a SQLite file or ':memory:' with the app's pragmas (serverPragmas). */
export function openNodeSqlite(path: string, opts: { exclusive?: boolean; busyTimeoutMs?: number } = {}): DatabaseSync {
  const sqlite = new DatabaseSync(path);
  for (const pragma of serverPragmas(path, opts)) sqlite.exec(pragma);
  return sqlite;
}

/** Kysely's own SqliteDialect over node:sqlite, through the statement cache. */
export function nodeKysely(sqlite: DatabaseSync, statement = statementCache(sqlite)): Kysely<Schema> {
  const database: SqliteDatabase = {
    close: () => sqlite.close(),
    prepare(sql): SqliteStatement {
      const s = statement(sql);
      return {
        reader: s.reader,
        all: (params) => s.stmt.all(...bind(params)),
        run: (params) => s.stmt.run(...bind(params)),
        iterate: (params) => s.stmt.iterate(...bind(params)),
      };
    },
  };
  return new Kysely<Schema>({ dialect: new SqliteDialect({ database }) });
}

/**
 * All-or-nothing, as on Bun: the statements run synchronously inside one transaction, so no other
 * request's statement interleaves (one connection), and any error rolls the whole batch back.
 */
export function nodeAtomic(sqlite: DatabaseSync, statement = statementCache(sqlite)): Atomic {
  const last = sqlite.prepare(LAST_WRITE_SQL);
  return async (queries: readonly CompiledQuery[]) => {
    sqlite.exec('BEGIN');
    try {
      const results = queries.map((q) => execute(statement(q.sql), q, last));
      sqlite.exec('COMMIT');
      return results;
    } catch (e) {
      if (sqlite.isTransaction) sqlite.exec('ROLLBACK');
      throw e;
    }
  };
}

/** Plain-SQL reads through the statement cache, answered at once (see ReadNow). */
export function nodeReadNow(sqlite: DatabaseSync, statement = statementCache(sqlite)): ReadNow {
  return <T>(sql: string, params: readonly unknown[]) => statement(sql).stmt.all(...bind(params)) as T[];
}

/** Plain-SQL reads through the statement cache (see ReadSql). */
export function nodeRead(sqlite: DatabaseSync, statement = statementCache(sqlite)): ReadSql {
  const now = nodeReadNow(sqlite, statement);
  return async <T>(sql: string, params: readonly unknown[]) => now<T>(sql, params);
}

/** exec/query over node:sqlite, for the portable migrator. */
export function nodeSqlExec(sqlite: DatabaseSync): SqlExec {
  return {
    exec: (sql) => sqlite.exec(sql),
    query: <T>(sql: string, params: readonly unknown[] = []) => sqlite.prepare(sql).all(...bind(params)) as T[],
  };
}

/** The start-up's view of one node:sqlite database (see SqliteBinding); Node and Deno share it. */
export const openNodeSqliteBinding: OpenSqlite = (path, opts) => {
  const sqlite = openNodeSqlite(path, opts);
  const statement = statementCache(sqlite);
  const readNow = nodeReadNow(sqlite, statement);
  return {
    db: nodeKysely(sqlite, statement),
    atomic: nodeAtomic(sqlite, statement),
    read: nodeRead(sqlite, statement),
    readNow,
    readManyNow: readManyNow(readNow, (sql) => void statement(sql).stmt.run(), () => sqlite.isTransaction),
    sql: nodeSqlExec(sqlite),
    close: () => sqlite.close(),
  };
};
