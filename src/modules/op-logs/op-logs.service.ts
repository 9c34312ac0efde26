import { sql, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import type { OpLogTable } from '../../db/schema.ts';
import { notFound } from '../../core/errors.ts';
import { createdBounds, PROBE_ROWS, startsWith, whereCreatedBetween, whereStartsWith } from '../../core/pagination.ts';
import { countByDays, countByKeys, countByTree, countedDelete, countWithinDates } from '../../db/log-counts.ts';
import type { OpLog, OpLogPageInput } from './op-logs.schemas.ts';
import { prepare, qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import type { Runner } from '../../db/runner.ts';
import { rowOfUserInScope } from '../../access/data-scope.ts';
import { byUserColumn, scopeCondition, scopedPage } from '../../access/scoped-page.ts';

/** Rows concern their operator; rows with no known operator only under scope `all`. */
export const OP_SCOPE = byUserColumn(sql.ref('op_log.operator_id'));

const SORT = {
  createdAt: 'created_at',
  module: 'module',
  operatorName: sql`operator_name COLLATE NOCASE`,
  status: 'status',
  durationMs: 'duration_ms',
};

const COLUMNS = [
  'id', 'module', 'action', 'method', 'path', 'operator_id', 'operator_name', 'ip', 'user_agent',
  'status', 'error_msg', 'duration_ms', 'trace_id', 'created_at', 'params', 'api_key_id', 'api_key_name',
] as const;

function toOpLog(r: Selectable<OpLogTable>): OpLog {
  return {
    id: r.id,
    module: r.module,
    action: r.action,
    method: r.method,
    path: r.path,
    operatorId: r.operator_id,
    operatorName: r.operator_name,
    ip: r.ip,
    userAgent: r.user_agent,
    status: r.status,
    errorMsg: r.error_msg,
    durationMs: r.duration_ms,
    traceId: r.trace_id,
    createdAt: r.created_at,
    params: r.params,
    apiKeyId: r.api_key_id ?? null,
    apiKeyName: r.api_key_name ?? null,
  };
}

/** Matches beyond which walking created_at (newest first) beats sorting every match. */
const BROAD = 1000;

/** Whether operator_name starts with `text` on at least BROAD rows; reads at most BROAD index entries. */
async function isBroadName(run: Runner, text: string) {
  const probe = whereStartsWith(qb.selectFrom('op_log').select('id'), 'operator_name', text, { nocase: true }).limit(BROAD);
  const row = await run.first<{ n: number }>(qb.selectFrom(probe.as('p')).select((eb) => eb.fn.countAll<number>().as('n')).compile());
  return Number(row?.n ?? 0) >= BROAD;
}

/**
 * The rows a page of the op log selects for `params` (FROM and WHERE), for anything that must select
 * the same rows; the page's options: the name prefix `unindexed`, or left out (`named` false), and
 * its data scope.
 */
export function opLogFilter(p: OpLogPageInput['params'], o: { unindexed?: boolean; named?: boolean; scope?: RawBuilder<boolean> | undefined } = {}) {
  let q = qb.selectFrom('op_log');
  if (p.module) q = q.where('module', '=', p.module);
  if (p.action) q = q.where('action', '=', p.action);
  if (o.named !== false) q = whereStartsWith(q, 'operator_name', p.operatorName, { nocase: true, unindexed: o.unindexed });
  if (p.status !== undefined) q = q.where('status', '=', p.status);
  // The scope last: an AND chain nests leftwards, and D1 refuses expressions deeper than 100.
  if (o.scope) q = q.where(o.scope);
  return whereCreatedBetween(q, 'created_at', p);
}

export async function pageOpLogs(deps: Ports, run: Runner, req: OpLogPageInput) {
  const p = req.params;
  // A name prefix, newest first, as the login log does: one statement that walks created_at and
  // filters when the newest PROBE_ROWS rows hold the page (many recent matches), else sorts the
  // matches' (operator_name, created_at) index entries (few or old matches: the walk read nearly
  // the whole log). Pages beyond the probe's reach choose in two steps (isBroadName).
  const named = p.operatorName !== undefined && (req.sortField ?? 'createdAt') === 'createdAt';
  const seek = named && req.pageNo * req.pageSize <= PROBE_ROWS;
  const walkTime = seek || (named && (await isBroadName(run, p.operatorName!)));
  const options = (scope: RawBuilder<boolean> | undefined) => {
    /** `named` false: without the name prefix (the probe's sort walk). */
    const build = (unindexed: boolean, named = true) => opLogFilter(p, { unindexed, named, scope });
    // The count tables hold every row: they answer only for scope `all` (no scope condition).
    const total = scope ? undefined : fromCountTables(p, build(false));
    return {
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered: build(walkTime),
      counted: build(false),
      matchFirst: seek ? build(false, false) : undefined,
      seek: seek ? build(false) : undefined,
      count: total && qb.selectNoFrom(total.as('n')),
      select: (q: SelectQueryBuilder<any, any, any>) => q.select(COLUMNS),
      sortColumns: SORT,
      defaultSort: 'createdAt' as const,
      idColumn: 'id',
      map: (r: Selectable<OpLogTable>) => toOpLog(r),
    };
  };
  return (await scopedPage(run, req, options, OP_SCOPE)).page;
}

/**
 * The exact total from the count tables (migrations 0011, 0017) for the filters they answer, each with or
 * without status: none or a date range (per-day counts), module and/or action (per-module counts),
 * an operatorName prefix (its prefix tree, 0017); a module/action or a name with a date range as its
 * total minus its rows outside the dates when those are fewer. Undefined for module/action with a
 * name, counted the usual way. `direct` is that usual count.
 */
function fromCountTables(p: OpLogPageInput['params'], direct: SelectQueryBuilder<any, any, any>) {
  const { from, to } = createdBounds(p);
  const status = p.status;
  const dated = from !== undefined || to !== undefined;
  const byModule = p.module !== undefined || p.action !== undefined;
  const byName = p.operatorName !== undefined;
  const everyDay = countByDays('op_log_day_counts', 'op_log', { status })!;
  const inDays = countByDays('op_log_day_counts', 'op_log', { status, from, to });
  if (byModule && byName) return undefined;
  if (!byModule && !byName) return inDays;
  const statusIs = status === undefined ? sql`` : sql` AND status = ${status}`;
  let matching: RawBuilder<number>;
  let rest: RawBuilder<unknown>;
  if (byModule) {
    matching = countByKeys('op_log_module_counts', { module: p.module, action: p.action, status });
    const eq = (col: string, v: string | undefined) => (v === undefined ? sql`` : sql` AND ${sql.ref(col)} = ${v}`);
    rest = sql`1${eq('module', p.module)}${eq('action', p.action)}${statusIs}`;
  } else {
    const byTree = countByTree('op_log_name_tree', p.operatorName!, status);
    if (!byTree) return undefined;
    matching = byTree;
    rest = sql`${startsWith(sql`(+operator_name) COLLATE NOCASE`, p.operatorName!)}${statusIs}`;
  }
  if (!dated) return matching;
  return countWithinDates({ log: 'op_log', rest, matching, all: everyDay, inDays, from, to, direct });
}

// One row by id, for anyone or if `caller`'s scope covers its operator: compiled once, bound per request.
const OP_LOG_BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('op_log').selectAll().where('id', '=', p.id));
const OP_LOG_IN_SCOPE = prepare<{ id: number; caller: number }>((p) =>
  qb.selectFrom('op_log').selectAll().where('id', '=', p.id).where(rowOfUserInScope(p.caller, sql.ref('op_log.operator_id'))),
);

export async function opLogDetail(run: Runner, id: number) {
  const stmt = run.knownSuper ? OP_LOG_BY_ID.bind({ id }) : OP_LOG_IN_SCOPE.bind({ id, caller: run.userId });
  const row = await run.first<Selectable<OpLogTable>>(stmt);
  if (!row) throw notFound(`Operation log ${id} not found`);
  return toOpLog(row);
}

/** Deletes the given rows; ids that no longer exist, or outside the caller's data scope, are skipped. */
export async function deleteOpLogs(run: Runner, ids: number[]): Promise<number> {
  const auth = await run.caller();
  let q = qb.deleteFrom('op_log').where('id', 'in', idList(ids));
  if (!auth.isSuperAdmin) q = q.where(rowOfUserInScope(auth.userId, sql.ref('op_log.operator_id')));
  // Rows returned, not numDeletedRows: D1's count includes what the count triggers (0011) wrote.
  return run.write({ batch: [q.returning('id').compile()], finish: ([deleted]) => deleted?.rows.length ?? 0 });
}

/**
 * Deletes every row in the caller's data scope (everything for scope `all`). The recorder writes this request's own row after the handler returns,
 * so a cleared log still shows who cleared it.
 */
export async function clearOpLogs(run: Runner): Promise<number> {
  const auth = await run.caller();
  const scope = await scopeCondition(run, auth, OP_SCOPE);
  let q = qb.deleteFrom('op_log');
  let n = qb.selectFrom('op_log').select((eb) => eb.fn.countAll<number>().as('n'));
  if (scope) [q, n] = [q.where(scope), n.where(scope)];
  return run.write(countedDelete(n, q, scope ? undefined : 'op_log'));
}
