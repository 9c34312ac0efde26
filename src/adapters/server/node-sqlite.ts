import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { Kysely, SqliteDialect, type CompiledQuery, type QueryResult, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type { Atomic, ReadSql } from '../../core/ports';
import type { Database as Schema } from '../../db/schema';
import { countSqlParams } from './sql-params';
import type { OpenSqlite, SqlExec } from './sqlite-binding';

/** D1's limit of bound parameters per statement, enforced here too so Node/Deno runs catch what D1 would refuse. */
export const MAX_BOUND_PARAMS = 100;

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
    const count = countSqlParams(sql);
    if (count > MAX_BOUND_PARAMS) {
      throw new Error(`D1 allows at most ${MAX_BOUND_PARAMS} bound parameters per statement, got ${count}: ${sql.slice(0, 120)}`);
    }
    const stmt = sqlite.prepare(sql);
    hit = { stmt, reader: stmt.columns().length > 0 };
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, hit);
    return hit;
  };
}

type Statement = ReturnType<ReturnType<typeof statementCache>>;

function execute(s: Statement, params: readonly unknown[]): QueryResult<unknown> {
  if (s.reader) return { rows: s.stmt.all(...bind(params)) };
  const r = s.stmt.run(...bind(params));
  return { rows: [], numAffectedRows: BigInt(r.changes), insertId: BigInt(r.lastInsertRowid) };
}

/** Opens (creating) a database with the same pragmas as the Bun adapter (see openSqlite there). */
export function openNodeSqlite(path: string, opts: { exclusive?: boolean } = {}): DatabaseSync {
  const sqlite = new DatabaseSync(path);
  if (path !== ':memory:') sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  sqlite.exec('PRAGMA busy_timeout = 5000');
  sqlite.exec('PRAGMA synchronous = NORMAL');
  if (opts.exclusive && path !== ':memory:') sqlite.exec('PRAGMA locking_mode = EXCLUSIVE');
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
  return async (queries: readonly CompiledQuery[]) => {
    sqlite.exec('BEGIN');
    try {
      const results = queries.map((q) => execute(statement(q.sql), q.parameters));
      sqlite.exec('COMMIT');
      return results;
    } catch (e) {
      if (sqlite.isTransaction) sqlite.exec('ROLLBACK');
      throw e;
    }
  };
}

/** Plain-SQL reads through the statement cache (see ReadSql). */
export function nodeRead(sqlite: DatabaseSync, statement = statementCache(sqlite)): ReadSql {
  return async <T>(sql: string, params: readonly unknown[]) => statement(sql).stmt.all(...bind(params)) as T[];
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
  return {
    db: nodeKysely(sqlite, statement),
    atomic: nodeAtomic(sqlite, statement),
    read: nodeRead(sqlite, statement),
    sql: nodeSqlExec(sqlite),
    close: () => sqlite.close(),
  };
};
