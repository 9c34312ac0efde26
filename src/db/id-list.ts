import { sql, type RawBuilder } from 'kysely';
import { qb } from './compile.ts';
import type { Runner } from './runner.ts';

/**
 * A list of validated ids as ONE bound parameter: `col IN ${idList(ids)}` or
 * `SELECT value FROM json_each(...)`. D1 caps a statement at 100 bound parameters, and a batch
 * action may carry 100 ids plus other values.
 */
export function idList(ids: readonly number[]): RawBuilder<number> {
  return sql<number>`(SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** "7, 8, … (12 in all)": at most ten ids, then how many there were. */
export function idsShown(ids: readonly number[]): string {
  return ids.slice(0, 10).join(', ') + (ids.length > 10 ? `, … (${ids.length} in all)` : '');
}

/** "unknown role id 7" / "unknown menu ids 7, 8, … (12 in all)" for a grant that named missing rows. */
export function unknownIdsMessage(field: string, kind: string, missing: readonly number[]): string {
  if (missing.length === 0) return `${field}: a ${kind} was removed meanwhile; reload and try again`;
  return `${field}: unknown ${kind} id${missing.length === 1 ? '' : 's'} ${idsShown(missing)}`;
}

/** The ids among `ids` that have no row in `table`, for "unknown id" messages. */
export async function missingIds(run: Runner, table: 'roles' | 'menus' | 'users' | 'orgs', ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await run.rows<{ id: number }>(qb.selectFrom(table).select('id').where('id', 'in', idList(ids)).compile());
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}
