import { sql, type Selectable } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { OpLogTable } from '../../db/schema.ts';
import { notFound } from '../../core/errors.ts';
import { createdBounds, runPage, whereCreatedBetween, whereStartsWith } from '../../core/pagination.ts';
import { countByDays, countByKeys, countByPrefix } from '../../db/log-counts.ts';
import type { OpLog, OpLogPageInput } from './op-logs.schemas.ts';
import { knownSuperAdmin, type AuthUser } from '../../core/caller.ts';
import { idList } from '../../db/id-list.ts';
import { callerScope, rowOfUserInScope, userColumnFilter } from '../access/data-scope.ts';

/** Rows concern their operator; rows with no known operator only under scope `all`. */
const opScope = async (deps: Deps, auth: AuthUser) => userColumnFilter(await callerScope(deps, auth), auth.userId, sql.ref('op_log.operator_id'));

const SORT = {
  createdAt: 'created_at',
  module: 'module',
  operatorName: sql`operator_name COLLATE NOCASE`,
  status: 'status',
  durationMs: 'duration_ms',
};

const COLUMNS = [
  'id', 'module', 'action', 'method', 'path', 'operator_id', 'operator_name', 'ip', 'user_agent',
  'status', 'error_msg', 'duration_ms', 'trace_id', 'created_at', 'params',
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
  };
}

export async function pageOpLogs(deps: Deps, auth: AuthUser, req: OpLogPageInput) {
  const p = req.params;
  let filtered = deps.db.selectFrom('op_log');
  const scope = await opScope(deps, auth);
  if (scope) filtered = filtered.where(scope);
  if (p.module) filtered = filtered.where('module', '=', p.module);
  if (p.action) filtered = filtered.where('action', '=', p.action);
  filtered = whereStartsWith(filtered, 'operator_name', p.operatorName, { nocase: true });
  if (p.status !== undefined) filtered = filtered.where('status', '=', p.status);
  filtered = whereCreatedBetween(filtered, 'created_at', p);
  const total = scope ? undefined : fromCountTables(p);
  return runPage(deps.readMany, req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    count: total && deps.db.selectNoFrom(total.as('n')),
    select: (qb) => qb.select(COLUMNS),
    sortColumns: SORT,
    defaultSort: 'createdAt',
    idColumn: 'id',
    map: (r: Selectable<OpLogTable>) => toOpLog(r),
  });
}

/**
 * The exact total from the count tables (migration 0011) for the filters they answer, each with or
 * without status: none or a date range (per-day counts), module and/or action (per-module counts),
 * an operatorName prefix (per-name counts). Undefined for mixes of those, counted the usual way.
 */
function fromCountTables(p: OpLogPageInput['params']) {
  const { from, to } = createdBounds(p);
  const dated = from !== undefined || to !== undefined;
  const byModule = p.module !== undefined || p.action !== undefined;
  const byName = p.operatorName !== undefined;
  if (Number(dated) + Number(byModule) + Number(byName) > 1) return undefined;
  if (byModule) return countByKeys('op_log_module_counts', { module: p.module, action: p.action, status: p.status });
  const all = countByDays('op_log_day_counts', 'op_log', { status: p.status, from, to });
  if (!byName || !all) return all;
  return countByPrefix({ table: 'op_log_name_counts', column: 'operator_name', nocase: true, text: p.operatorName!, status: p.status, measure: 'sum', total: all });
}

export async function opLogDetail(deps: Deps, auth: AuthUser, id: number) {
  let q = deps.db.selectFrom('op_log').selectAll().where('id', '=', id);
  if (!knownSuperAdmin(auth)) q = q.where(rowOfUserInScope(auth.userId, sql.ref('op_log.operator_id')));
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(`Operation log ${id} not found`);
  return toOpLog(row);
}

/** Deletes the given rows; ids that no longer exist, or outside the caller's data scope, are skipped. */
export async function deleteOpLogs(deps: Deps, auth: AuthUser, ids: number[]): Promise<number> {
  let q = deps.db.deleteFrom('op_log').where('id', 'in', idList(ids));
  if (!auth.isSuperAdmin) q = q.where(rowOfUserInScope(auth.userId, sql.ref('op_log.operator_id')));
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Deletes every row in the caller's data scope (everything for scope `all`). The recorder writes this request's own row after the handler returns,
 * so a cleared log still shows who cleared it.
 */
export async function clearOpLogs(deps: Deps, auth: AuthUser): Promise<number> {
  const scope = await opScope(deps, auth);
  let q = deps.db.deleteFrom('op_log');
  if (scope) q = q.where(scope);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}
