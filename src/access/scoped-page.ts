import { sql, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { pageStatements, type PageOptions, type PageRequest, type PageResult } from '../core/pagination.ts';
import { qb } from '../db/compile.ts';
import { readsOf, type Stmt } from '../db/plan.ts';
import type { Runner } from '../db/runner.ts';
import { callerScope, scopeAll, scopeFilter, scopeOrgs, scopeSelf, userColumnFilter, type CallerScope } from './data-scope.ts';

/**
 * How a page filters by data scope: given the caller's scope read beforehand (bound lists, `undefined`
 * for `all`), or, with 'sql', as conditions on the caller's id that SQLite evaluates itself.
 */
export type ScopeFilter = (scope: CallerScope | 'sql', callerId: number) => RawBuilder<boolean> | undefined;

/** Rows whose user column names a user in scope (log rows, files); NULL users only under `all`. */
export const byUserColumn =
  (userCol: RawBuilder<unknown>): ScopeFilter =>
  (scope, callerId) =>
    scope === 'sql'
      ? sql<boolean>`${userCol} IN (SELECT sc_u.id FROM users sc_u WHERE ${inScopeSql(callerId, sql.ref('sc_u.org_id'), sql.ref('sc_u.id'))})`
      : userColumnFilter(scope, callerId, userCol);

/** Rows of a user whose organisation and id are columns of the page (sessions joined to users). */
export const byUserRow =
  (orgCol: RawBuilder<unknown>, userCol: RawBuilder<unknown>): ScopeFilter =>
  (scope, callerId) =>
    scope === 'sql' ? inScopeSql(callerId, orgCol, userCol) : scopeFilter(scope, callerId, orgCol, userCol);

/** A user (organisation, id) in the caller's narrower scope, left to SQLite: its organisations and "self" are non-correlated subqueries, run once per statement. */
const inScopeSql = (callerId: number, orgCol: RawBuilder<unknown>, userCol: RawBuilder<unknown>) =>
  sql<boolean>`(${orgCol} IN ${scopeOrgs(callerId)} OR (${userCol} = ${callerId} AND ${scopeSelf(callerId)}))`;

/**
 * A page filtered by the caller's data scope, plus `extra` statements read with it (e.g. whether
 * the caller holds a code). Where a batch is one round trip (D1) everything goes in ONE batch, which
 * on a plain-read route also carries the deferred auth row: whether the caller's scope is `all`,
 * the page as an `all` caller sees it gated on that (in LIMIT, see PageOptions.gate), and the page
 * with the scope as SQL gated on the opposite; only one of the two reads rows. Elsewhere (servers,
 * no round trips) the scope is read first and bound as lists, as the users page does.
 */
export async function scopedPage<S extends string, Row, R>(
  run: Runner,
  req: PageRequest<S>,
  options: (scope: RawBuilder<boolean> | undefined) => PageOptions<S, Row, R>,
  filter: ScopeFilter,
  extra: readonly Stmt[] = [],
): Promise<{ page: PageResult<R>; extra: unknown[][] }> {
  const userId = run.userId;
  if (run.knownSuper || !run.oneTrip) {
    const scope = run.knownSuper ? undefined : filter(await callerScope(run), userId);
    const page = pageStatements(req, options(scope));
    const rows = await run.read(readsOf(...page.statements, ...extra));
    return { page: page.finish(rows.slice(0, page.statements.length)), extra: rows.slice(page.statements.length) };
  }
  const all = scopeAll(userId);
  const wide = pageStatements(req, { ...options(undefined), gate: all });
  const narrow = pageStatements(req, { ...options(filter('sql', userId)), gate: sql`NOT ${all}` });
  const [flag = [], ...rows] = await run.read(readsOf(sql`SELECT ${all} AS all_`.compile(qb), ...wide.statements, ...narrow.statements, ...extra));
  // The two may differ in length (a part-of search is one statement unless its filters bind too many values).
  const n = wide.statements.length;
  const m = narrow.statements.length;
  const isAll = (flag[0] as { all_?: number } | undefined)?.all_ === 1;
  const page = isAll ? wide.finish(rows.slice(0, n)) : narrow.finish(rows.slice(n, n + m));
  return { page, extra: rows.slice(n + m) };
}


/**
 * The caller's data scope as ONE condition for a write over many rows (log clears): undefined for a
 * known super admin. Where a batch is one round trip (D1) it is stated in SQL (`all`, or the
 * narrower scope as subqueries SQLite runs once), so the write needs no read before it; elsewhere
 * the scope is read first and bound as lists, as before.
 */
export async function scopeCondition(run: Runner, auth: Caller, filter: ScopeFilter): Promise<RawBuilder<boolean> | undefined> {
  if (auth.isSuperAdmin) return undefined;
  if (!run.oneTrip) return filter(await callerScope(run), auth.userId);
  return sql<boolean>`(${scopeAll(auth.userId)} OR ${filter('sql', auth.userId)})`;
}
