import { sql, type Selectable } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { OpLogTable } from '../../db/schema.ts';
import { notFound } from '../../core/errors.ts';
import { runPage, whereCreatedBetween, whereStartsWith } from '../../core/pagination.ts';
import type { OpLog, OpLogPageInput } from './op-logs.schemas.ts';

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

export async function pageOpLogs(deps: Deps, req: OpLogPageInput) {
  const p = req.params;
  let filtered = deps.db.selectFrom('op_log');
  if (p.module) filtered = filtered.where('module', '=', p.module);
  if (p.action) filtered = filtered.where('action', '=', p.action);
  filtered = whereStartsWith(filtered, 'operator_name', p.operatorName, { nocase: true });
  if (p.status !== undefined) filtered = filtered.where('status', '=', p.status);
  filtered = whereCreatedBetween(filtered, 'created_at', p);
  return runPage(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    select: (qb) => qb.select(COLUMNS),
    sortColumns: SORT,
    defaultSort: 'createdAt',
    idColumn: 'id',
    map: (r: Selectable<OpLogTable>) => toOpLog(r),
  });
}

export async function opLogDetail(deps: Deps, id: number) {
  const row = await deps.db.selectFrom('op_log').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`Operation log ${id} not found`);
  return toOpLog(row);
}

/** Deletes the given rows; ids that no longer exist are skipped. */
export async function deleteOpLogs(deps: Deps, ids: number[]): Promise<number> {
  const r = await deps.db.deleteFrom('op_log').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * Deletes every row. The recorder writes this request's own row after the handler returns,
 * so a cleared log still shows who cleared it.
 */
export async function clearOpLogs(deps: Deps): Promise<number> {
  const r = await deps.db.deleteFrom('op_log').executeTakeFirst();
  return Number(r.numDeletedRows);
}
