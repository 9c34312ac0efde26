import { sql, type DeleteQueryBuilder, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { qb } from './compile.ts';
import type { WritePlan } from './plan.ts';
import { startsWith } from '../core/pagination.ts';

/**
 * Exact page totals of the two logs read from the count tables of migrations 0011 and 0017 (kept by
 * triggers in the log writes' own statements) instead of a COUNT that walks every matching index
 * entry (~70 ms per million). Each builder returns undefined when the filter is not one its table
 * answers exactly; the page then counts the usual way.
 */

type Status = string | number | undefined;

const sum = (table: string, where: RawBuilder<unknown>) =>
  sql<number>`(SELECT coalesce(sum(n), 0) FROM ${sql.table(table)} WHERE ${where})`;

const statusIs = (status: Status) => (status === undefined ? sql`1` : sql`status = ${status}`);

const DAY_MS = 86_400_000;
const START = 'T00:00:00.000Z';
const END = 'T23:59:59.999Z';
const shiftDay = (day: string, by: number) => new Date(Date.parse(`${day}${START}`) + by * DAY_MS).toISOString().slice(0, 10);

/**
 * Rows with `status` (if given) created in [from, to] (ISO bounds, either open): the whole UTC
 * days inside from the day table, the part-days at either end (a date-time bound) by the log's
 * (status,) created_at index — at most a day's rows each. Undefined when no whole day is inside.
 */
export function countByDays(
  dayTable: string,
  logTable: string,
  filter: { status: Status; from?: string | undefined; to?: string | undefined },
): RawBuilder<number> | undefined {
  const { status, from, to } = filter;
  const first = from === undefined ? undefined : from.endsWith(START) ? from.slice(0, 10) : shiftDay(from.slice(0, 10), 1);
  const last = to === undefined ? undefined : to.endsWith(END) ? to.slice(0, 10) : shiftDay(to.slice(0, 10), -1);
  if (first !== undefined && last !== undefined && first > last) return undefined;
  const days = sql`${statusIs(status)}${first === undefined ? sql`` : sql` AND day >= ${first}`}${last === undefined ? sql`` : sql` AND day <= ${last}`}`;
  let total = sum(dayTable, days);
  const edge = (range: RawBuilder<unknown>) => sql<number>`(SELECT count(*) FROM ${sql.table(logTable)} WHERE ${statusIs(status)} AND ${range})`;
  if (first !== undefined && from !== `${first}${START}`) total = sql<number>`${total} + ${edge(sql`created_at >= ${from} AND created_at < ${`${first}${START}`}`)}`;
  if (last !== undefined && to !== `${last}${END}`) total = sql<number>`${total} + ${edge(sql`created_at > ${`${last}${END}`} AND created_at <= ${to}`)}`;
  return total;
}

/** Characters of a value its prefix tree keeps (migration 0017): the longest filter, LIKE_MAX. */
export const PREFIX_TREE_DEPTH = 48;

/**
 * Rows whose key (`login_log.login_name`, `login_log.ip` or `op_log.operator_name`) starts with
 * `text`, with `status` if given, from the key's prefix tree (migration 0017): `n` of the first
 * tree row at or after `text` that starts with it — one index seek per status, whatever the number
 * of rows or distinct keys. Without a status, the statuses present are walked one seek each (a
 * handful). Undefined for a text longer than the tree keeps (never, after validation) or holding
 * NUL (SQLite's substr and length stop there, so a tree keeps no start past it): the page then
 * counts the usual way.
 */
export function countByTree(tree: 'login_log_name_tree' | 'login_log_ip_tree' | 'op_log_name_tree', text: string, status: Status): RawBuilder<number> | undefined {
  if (text === '' || text.includes('\0') || [...text].length > PREFIX_TREE_DEPTH) return undefined;
  const t = sql.table(tree);
  const first = (s: RawBuilder<unknown>) =>
    sql<number>`(SELECT n FROM ${t} WHERE status = ${s} AND ${startsWith(sql`prefix`, text)} ORDER BY prefix LIMIT 1)`;
  if (status !== undefined) return sql<number>`coalesce(${first(sql`${status}`)}, 0)`;
  return sql<number>`(WITH RECURSIVE st(s) AS (SELECT min(status) FROM ${t} UNION ALL SELECT (SELECT min(status) FROM ${t} WHERE status > st.s) FROM st WHERE st.s IS NOT NULL)
    SELECT coalesce(sum(${first(sql`st.s`)}), 0) FROM st)`;
}

/** Rows of `table` (a key table) matching the equalities given, summed. */
export function countByKeys(table: string, keys: Record<string, string | number | undefined>): RawBuilder<number> {
  const given = Object.entries(keys).filter(([, v]) => v !== undefined);
  const where = given.length === 0 ? sql`1` : sql.join(given.map(([k, v]) => sql`${sql.ref(k)} = ${v}`), sql` AND `);
  return sum(table, where);
}

/** Every table the count triggers of a log keep (migrations 0011, 0017). */
const COUNT_TABLES = {
  login_log: ['login_log_day_counts', 'login_log_name_tree', 'login_log_ip_tree'],
  op_log: ['op_log_day_counts', 'op_log_module_counts', 'op_log_name_tree'],
} as const;

/**
 * A write plan that runs `del` and answers how many log rows it removed, counted by `count` (the
 * same WHERE) in the same atomic batch. Not numDeletedRows: on D1 that includes the rows the count triggers wrote;
 * not RETURNING: a clear of a million rows would ship a million ids. With `everyRow` (the delete
 * removes the whole log), the log's flag in log_bulk_delete holds its count triggers for the delete
 * and its count tables are emptied instead: one statement each, not a tree update per row.
 */
export function countedDelete(
  count: SelectQueryBuilder<any, any, { n: number }>,
  del: DeleteQueryBuilder<any, any, any>,
  everyRow?: 'login_log' | 'op_log',
): WritePlan<number> {
  const raw = (q: RawBuilder<unknown>) => q.compile(qb);
  const batch = everyRow
      ? [
          count.compile(),
          raw(sql`INSERT INTO log_bulk_delete (log) VALUES (${everyRow})`),
          del.compile(),
          ...COUNT_TABLES[everyRow].map((t) => raw(sql`DELETE FROM ${sql.table(t)}`)),
          raw(sql`DELETE FROM log_bulk_delete WHERE log = ${everyRow}`),
        ]
      : [count.compile(), del.compile()];
  return { batch, finish: ([counted]) => Number((counted?.rows[0] as { n: number } | undefined)?.n ?? 0) };
}

/**
 * Rows matching a filter A (its total `matching` from a count table) created within [from, to]:
 * when fewer rows lie outside the dates (`all − inDays`, both from the day table) than match A,
 * A's total minus A's rows outside the dates, read over created_at (`outside(range)`: cost ∝ the
 * rows outside); otherwise `direct` (the plain count, cost ∝ A's rows). Worst case: both halves
 * of the log, ~N/2 entries either way. `matching` is read once.
 */
export function countWithinDates(opts: {
  log: 'login_log' | 'op_log';
  /** The filter without the dates, for the rows outside them (a name column written `(+col)`, off its index). */
  rest: RawBuilder<unknown>;
  matching: RawBuilder<number>;
  all: RawBuilder<number>;
  inDays: RawBuilder<number> | undefined;
  from?: string | undefined;
  to?: string | undefined;
  /** The rows' usual count query (FROM and WHERE). */
  direct: SelectQueryBuilder<any, any, any>;
}): RawBuilder<number> | undefined {
  const { all, inDays, from, to } = opts;
  if (!inDays) return undefined;
  const outside = (range: RawBuilder<unknown>) => sql<number>`(SELECT count(*) FROM ${sql.table(opts.log)} WHERE ${range} AND ${opts.rest})`;
  let minus = sql<number>`0`;
  if (from !== undefined) minus = sql<number>`${minus} + ${outside(sql`created_at < ${from}`)}`;
  if (to !== undefined) minus = sql<number>`${minus} + ${outside(sql`created_at > ${to}`)}`;
  const direct = sql<number>`(${opts.direct.select((eb) => eb.fn.countAll<number>().as('n'))})`;
  // `matching` read once (a MATERIALIZED CTE), not once per mention: over many keys (a prefix of
  // 50k distinct names) each reading costs ~3 ms.
  return sql<number>`(WITH a(m) AS MATERIALIZED (SELECT ${opts.matching}) SELECT CASE WHEN ${all} - ${inDays} < m THEN m - (${minus}) ELSE ${direct} END FROM a)`;
}
