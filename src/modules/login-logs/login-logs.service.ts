import { sql } from 'kysely';
import type { Deps } from '../../deps';
import { runPage, whereCreatedBetween, whereStartsWith } from '../../core/pagination';
import type { LoginLogPageInput } from './login-logs.schemas';

const SORT = { createdAt: 'created_at', loginName: sql`login_name COLLATE NOCASE`, ip: 'ip', status: 'status' };

const COLUMNS = [
  'id', 'login_name', 'user_id', 'status', 'msg', 'ip', 'user_agent', 'browser', 'os', 'country', 'city', 'trace_id', 'created_at',
] as const;

export async function loginLogPage(deps: Deps, req: LoginLogPageInput) {
  const p = req.params;
  let filtered = deps.db.selectFrom('login_log');
  // Prefix matches ride the (login_name NOCASE, created_at) and (ip, created_at) indexes; a
  // '%…%' search would scan the whole table (≈350 ms at a million rows, see bench/).
  filtered = whereStartsWith(filtered, 'login_name', p.loginName, { nocase: true });
  filtered = whereStartsWith(filtered, 'ip', p.ip);
  if (p.status) filtered = filtered.where('status', '=', p.status);
  filtered = whereCreatedBetween(filtered, 'created_at', p);
  return runPage(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    select: (qb) => qb.select(COLUMNS),
    sortColumns: SORT,
    defaultSort: 'createdAt',
    idColumn: 'id',
    map: (r: Record<string, any>) => ({
      id: r.id as number,
      loginName: r.login_name as string,
      userId: r.user_id as number | null,
      status: r.status as 'success' | 'failure',
      msg: r.msg as string,
      ip: r.ip as string,
      userAgent: r.user_agent as string,
      browser: r.browser as string,
      os: r.os as string,
      country: r.country as string | null,
      city: r.city as string | null,
      traceId: r.trace_id as string,
      createdAt: r.created_at as string,
    }),
  });
}

/** Deletes the given rows; ids that no longer exist are skipped (retention may have removed them). */
export async function deleteLoginLogs(deps: Deps, ids: number[]): Promise<number> {
  const r = await deps.db.deleteFrom('login_log').where('id', 'in', ids).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function clearLoginLogs(deps: Deps): Promise<number> {
  const r = await deps.db.deleteFrom('login_log').executeTakeFirst();
  return Number(r.numDeletedRows);
}
