import { sql, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { OpLogTable } from '../../db/schema.ts';
import { notFound } from '../../core/errors.ts';
import { whereCreatedBetween, whereStartsWith } from '../../core/pagination.ts';
import type { OpLog, OpLogPageInput } from './op-logs.schemas.ts';
import { knownSuperAdmin, type AuthUser } from '../../core/caller.ts';
import { idList } from '../../db/id-list.ts';
import { callerScope, rowOfUserInScope } from '../access/data-scope.ts';
import { byUserColumn, scopedPage } from '../access/scoped-page.ts';

/** Rows concern their operator; rows with no known operator only under scope `all`. */
const OP_SCOPE = byUserColumn(sql.ref('op_log.operator_id'));
const opScope = async (deps: Deps, auth: AuthUser) => OP_SCOPE(await callerScope(deps, auth), auth.userId);

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
  const options = (scope: RawBuilder<boolean> | undefined) => {
    let filtered = deps.db.selectFrom('op_log');
    if (scope) filtered = filtered.where(scope);
    if (p.module) filtered = filtered.where('module', '=', p.module);
    if (p.action) filtered = filtered.where('action', '=', p.action);
    filtered = whereStartsWith(filtered, 'operator_name', p.operatorName, { nocase: true });
    if (p.status !== undefined) filtered = filtered.where('status', '=', p.status);
    filtered = whereCreatedBetween(filtered, 'created_at', p);
    return {
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered,
      select: (qb: SelectQueryBuilder<any, any, any>) => qb.select(COLUMNS),
      sortColumns: SORT,
      defaultSort: 'createdAt' as const,
      idColumn: 'id',
      map: (r: Selectable<OpLogTable>) => toOpLog(r),
    };
  };
  return (await scopedPage(deps, auth, req, options, OP_SCOPE)).page;
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
