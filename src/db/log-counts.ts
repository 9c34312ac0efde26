import { sql, type DeleteQueryBuilder, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Deps } from '../deps.ts';
import { PREFIX_END } from '../core/pagination.ts';

/**
 * Exact page totals of the two logs read from the count tables of migration 0011 (kept by
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

/** Above this many keys in range, the complement (all − below − above) is tried first. */
export const FEW_KEYS = 4096;

/**
 * Rows whose `column` starts with `text` (NOCASE when the column is), counted over a key table
 * (`measure` = sum(n)) or an index of the log itself (`count(*)`): cost ∝ the keys read. When the
 * range holds FEW_KEYS or more keys and the rest of the table fewer, it is counted as the
 * complement `total − below − above` (total = every row with that status), so a prefix matching
 * nearly everything reads only what it does not match. The worst case — many keys on both sides
 * — reads the range (see docs in README, "Exact totals").
 */
export function countByPrefix(opts: {
  table: string;
  column: string;
  nocase: boolean;
  text: string;
  status: Status;
  measure: 'sum' | 'count';
  total: RawBuilder<number>;
}): RawBuilder<number> {
  const { table, column, text, status } = opts;
  const col = opts.nocase ? sql`${sql.ref(column)} COLLATE NOCASE` : sql.ref(column);
  const inRange = sql`${col} >= ${text} AND ${col} < ${text + PREFIX_END} AND ${statusIs(status)}`;
  const below = sql`${col} < ${text} AND ${statusIs(status)}`;
  const above = sql`${col} >= ${text + PREFIX_END} AND ${statusIs(status)}`;
  const measure = (where: RawBuilder<unknown>) =>
    opts.measure === 'sum' ? sum(table, where) : sql<number>`(SELECT count(*) FROM ${sql.table(table)} WHERE ${where})`;
  const probe = (where: RawBuilder<unknown>) =>
    sql<number>`(SELECT count(*) FROM (SELECT 1 FROM ${sql.table(table)} WHERE ${where} LIMIT ${FEW_KEYS}))`;
  // SQLite evaluates a CASE branch's subqueries only when that branch is taken.
  return sql<number>`CASE WHEN ${probe(inRange)} < ${FEW_KEYS} OR ${probe(below)} + ${probe(above)} >= ${FEW_KEYS}
    THEN ${measure(inRange)} ELSE ${opts.total} - ${measure(below)} - ${measure(above)} END`;
}

/** Rows of `table` (a key table) matching the equalities given, summed. */
export function countByKeys(table: string, keys: Record<string, string | number | undefined>): RawBuilder<number> {
  const given = Object.entries(keys).filter(([, v]) => v !== undefined);
  const where = given.length === 0 ? sql`1` : sql.join(given.map(([k, v]) => sql`${sql.ref(k)} = ${v}`), sql` AND `);
  return sum(table, where);
}

/**
 * Runs `del` and returns how many log rows it removed, counted by `count` (the same WHERE) in the
 * same atomic batch. Not numDeletedRows: on D1 that includes the rows the count triggers wrote;
 * not RETURNING: a clear of a million rows would ship a million ids.
 */
export async function countedDelete(
  deps: Deps,
  count: SelectQueryBuilder<any, any, { n: number }>,
  del: DeleteQueryBuilder<any, any, any>,
): Promise<number> {
  const [counted] = await deps.atomic([count.compile(), del.compile()]);
  return Number((counted!.rows[0] as { n: number } | undefined)?.n ?? 0);
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
