import { sql, type CompiledQuery, type SelectQueryBuilder } from 'kysely';
import { notFound } from '../core/errors.ts';
import { pageStatements, type PageRequest } from '../core/pagination.ts';
import type { Ports } from '../core/ports.ts';
import { prepare, qb } from './compile.ts';
import { guardStatement, versionGuard } from './guards.ts';
import { lastRow } from './plan.ts';
import type { Runner } from './runner.ts';
import type { Database } from './schema.ts';

/**
 * The write plans every plain editable record shares (dictionaries, parameters, notices, posts):
 * `edit {id, version, …}` as one batch whose guards answer 404 for a missing row and 409 for a
 * stale version, in that order, before the update reads its own answer back (RETURNING).
 */
export type RecordTable = 'dict_types' | 'dict_data' | 'configs' | 'notices' | 'posts';

/** Guard: row `id` of `table` exists (else the batch fails with out_of_scope's 404; the plan names the record). */
export const existsGuard = (table: RecordTable, id: number): CompiledQuery =>
  guardStatement('out_of_scope', sql`NOT EXISTS (SELECT 1 FROM ${sql.table(table)} WHERE id = ${id})`);

/**
 * The batch of an edit: the row exists (404), `scope` when given (a guard of the caller's, e.g.
 * data scope), the version the client read is current (409), then the update of the fields in
 * `set` (column → value), bumping the version, returning `columns`.
 */
export function editBatch<T extends RecordTable>(
  table: T,
  input: { id: number; version: number },
  set: Record<string, unknown>,
  now: string,
  columns: readonly (keyof Database[T] & string)[],
  scope: CompiledQuery[] = [],
): CompiledQuery[] {
  return [
    existsGuard(table, input.id),
    ...scope,
    versionGuard(table, input.id, input.version),
    (qb.updateTable(table) as any)
      .set((eb: any) => ({ ...set, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .returning(columns)
      .compile(),
  ];
}

/** Sets the fields of `input` that are defined, under their column names (`fields`: JSON name → column). */
export function changedColumns(input: Record<string, unknown>, fields: Record<string, string>): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const [name, column] of Object.entries(fields)) if (input[name] !== undefined) set[column] = input[name];
  return set;
}

/** What the reads of a plain record need: its table and columns, its JSON face, its 404, its sort fields (JSON name → column). */
export interface RecordSpec<T extends RecordTable, Row, R, S extends string> {
  table: T;
  columns: readonly (keyof Database[T] & string)[];
  map: (row: Row) => R;
  notFound: (id: number) => string;
  sortColumns: Record<S | 'createdAt', keyof Database[T] & string>;
}

/**
 * The reads every plain record shares, compiled once: `page` over the rows a module's filter
 * selects (newest first by default), `detail` by id (404), `row` (the same, unmapped), and
 * `answer`, the record a write batch read back last (RETURNING).
 */
export function recordReads<T extends RecordTable, Row, R, S extends string>(spec: RecordSpec<T, Row, R, S>) {
  const byId = prepare<{ id: number }>((p) => (qb.selectFrom(spec.table) as any).select(spec.columns).where('id', '=', p.id));
  const sortColumns = Object.fromEntries(Object.entries(spec.sortColumns).map(([name, column]) => [name, `${spec.table}.${column}`])) as Record<S | 'createdAt', string>;
  const row = async (run: Runner, id: number): Promise<Row> => {
    const found = await run.first<Row>(byId.bind({ id }));
    if (!found) throw notFound(spec.notFound(id));
    return found;
  };
  return {
    page(deps: Ports, run: Runner, req: PageRequest<S | 'createdAt'>, filtered: SelectQueryBuilder<any, any, any>) {
      const page = pageStatements(req, {
        maxPageSize: deps.config.PAGE_SIZE_MAX,
        filtered,
        select: (q) => q.select(spec.columns as any),
        sortColumns,
        defaultSort: 'createdAt',
        idColumn: `${spec.table}.id`,
        map: spec.map,
      });
      return run.read({ reads: page.statements, finish: page.finish });
    },
    row,
    detail: async (run: Runner, id: number): Promise<R> => spec.map(await row(run, id)),
    answer: (results: readonly { rows: unknown[] }[]): R => spec.map(lastRow<Row>(results)!),
  };
}
