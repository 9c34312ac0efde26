import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { Atomic, ReadMany, ReadSql } from '../../core/ports.ts';
import { assertParamLimit, statementKind } from '../../db/statements.ts';
import type { D1Database, D1PreparedStatement, D1Result, D1Value } from './bindings.ts';

/** Kysely's parameters as D1 accepts them: no undefined, bigint, boolean or typed-array views. */
export function toD1Values(sql: string, parameters: readonly unknown[]): D1Value[] {
  // Fail loudly and the same way on every runtime the adapter is tested on, not only in production.
  assertParamLimit(parameters.length, sql);
  return parameters.map((p) => {
    if (p === undefined || p === null) return null;
    if (typeof p === 'boolean') return p ? 1 : 0;
    if (typeof p === 'bigint') {
      if (p > BigInt(Number.MAX_SAFE_INTEGER) || p < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError('bigint parameter out of safe range');
      return Number(p);
    }
    if (p instanceof Uint8Array) return p.slice().buffer as ArrayBuffer;
    if (p instanceof ArrayBuffer || typeof p === 'string' || typeof p === 'number') return p;
    if (p instanceof Date) return p.toISOString();
    throw new TypeError(`Unsupported D1 parameter type: ${typeof p}`);
  });
}

function prepare(d1: D1Database, query: CompiledQuery): D1PreparedStatement {
  return d1.prepare(query.sql).bind(...toD1Values(query.sql, query.parameters));
}

/** Kysely's result shape from D1's, as Atomic promises it: rows always; affected rows for writes, insert id for inserts. */
function toQueryResult<R>(query: CompiledQuery, result: D1Result<R>): QueryResult<R> {
  const rows = result.results ?? [];
  const kind = statementKind(query);
  if (kind === 'read') return { rows };
  return {
    rows,
    numAffectedRows: BigInt(result.meta?.changes ?? 0),
    ...(kind === 'insert' ? { insertId: BigInt(result.meta?.last_row_id ?? 0) } : {}),
  };
}

class D1Connection implements DatabaseConnection {
  private readonly d1: D1Database;
  constructor(d1: D1Database) {
    this.d1 = d1;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return toQueryResult(query, await prepare(this.d1, query).all<R>());
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('D1 does not support streaming queries');
  }
}

const NO_TRANSACTIONS =
  'D1 has no interactive transactions: build the statements up front and run them with deps.atomic([...])';

class D1Driver implements Driver {
  private readonly connection: D1Connection;
  constructor(d1: D1Database) {
    this.connection = new D1Connection(d1);
  }
  async init() {}
  async acquireConnection() {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error(NO_TRANSACTIONS);
  }
  async commitTransaction(): Promise<void> {
    throw new Error(NO_TRANSACTIONS);
  }
  async rollbackTransaction(): Promise<void> {
    throw new Error(NO_TRANSACTIONS);
  }
  async releaseConnection() {}
  async destroy() {}
}

/**
 * A Kysely dialect over a D1 binding: SQLite's adapter, compiler and introspector, with queries
 * sent as `prepare(sql).bind(...params).all()`. Our own because the published kysely-d1 targets
 * Kysely 0.23 and we want D1's limits enforced where queries are sent.
 */
export class D1Dialect implements Dialect {
  private readonly d1: D1Database;
  constructor(d1: D1Database) {
    this.d1 = d1;
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createDriver(): Driver {
    return new D1Driver(this.d1);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}

/** All-or-nothing on D1: the statements go in one `DB.batch()`, which D1 runs as one transaction. */
export function d1Atomic(d1: D1Database): Atomic {
  return async (queries) => {
    if (queries.length === 0) return [];
    const results = await d1.batch(queries.map((q) => prepare(d1, q)));
    return results.map((r, i) => toQueryResult(queries[i]!, r));
  };
}

/** deps.read on D1: one plain-SQL read, `prepare(sql).bind(...).all()`. */
export function d1Read(d1: D1Database): ReadSql {
  return async <T>(sql: string, params: readonly unknown[]) => (await d1.prepare(sql).bind(...toD1Values(sql, params)).all<T>()).results ?? [];
}

/** deps.readMany on D1: the reads in one `DB.batch()`, one round trip (and one consistent snapshot). */
export function d1ReadMany(d1: D1Database): ReadMany {
  const readMany = async (statements: Parameters<ReadMany>[0]) => {
    if (statements.length === 0) return [];
    const results = await d1.batch(statements.map((s) => d1.prepare(s.sql).bind(...toD1Values(s.sql, s.parameters))));
    return results.map((r) => r.results ?? []);
  };
  return Object.assign(readMany, { oneTrip: true as const });
}
