import type { CompiledQuery, QueryResult } from 'kysely';
import { MAX_BOUND_PARAMS } from '../core/ports.ts';

/** What a statement does, as both Atomic adapters report it (see Atomic in core/ports.ts). */
export type StatementKind = 'read' | 'insert' | 'update' | 'delete';

const NODE_KINDS: Record<string, StatementKind> = {
  SelectQueryNode: 'read',
  InsertQueryNode: 'insert',
  UpdateQueryNode: 'update',
  DeleteQueryNode: 'delete',
};

/**
 * From Kysely's query node; a raw `sql` statement (guard statements are raw INSERTs) by its
 * first keyword (a raw write must start with INSERT, REPLACE, UPDATE or DELETE to be counted).
 */
export function statementKind(query: CompiledQuery): StatementKind {
  const known = NODE_KINDS[query.query.kind];
  if (known) return known;
  const first = /^\s*([A-Za-z]+)/.exec(query.sql)?.[1]?.toUpperCase();
  if (first === 'INSERT' || first === 'REPLACE') return 'insert';
  if (first === 'UPDATE') return 'update';
  if (first === 'DELETE') return 'delete';
  return 'read';
}

/**
 * Refuses a statement with more bound parameters than D1 takes, the same way on every adapter, so
 * tests on Bun catch what D1 would refuse in production.
 */
export function assertParamLimit(count: number, sql: string): void {
  if (count > MAX_BOUND_PARAMS) {
    throw new Error(`D1 allows at most ${MAX_BOUND_PARAMS} bound parameters per statement, got ${count}: ${sql.slice(0, 120)}`);
  }
}

/** What SQLite says about the write that just completed on this connection. */
export const LAST_WRITE_SQL = 'SELECT changes() AS n, last_insert_rowid() AS id';
export interface LastWrite {
  n: number;
  id: number;
}

/**
 * One Atomic result (see core/ports.ts) from a statement that has run on a SQLite connection:
 * `lastWrite` runs LAST_WRITE_SQL, asked only after a write, so a write with RETURNING reports
 * its affected rows too.
 */
export function atomicResult(query: CompiledQuery, rows: unknown[], lastWrite: () => LastWrite): QueryResult<unknown> {
  const kind = statementKind(query);
  if (kind === 'read') return { rows };
  const { n, id } = lastWrite();
  return { rows, numAffectedRows: BigInt(n), ...(kind === 'insert' ? { insertId: BigInt(id) } : {}) };
}
