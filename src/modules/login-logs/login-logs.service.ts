import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { createdBounds, PROBE_ROWS, startsWith, whereCreatedBetween, whereStartsWith } from '../../core/pagination.ts';
import { countByDays, countByTree, countedDelete, countWithinDates } from '../../db/log-counts.ts';
import type { LoginLogPageInput } from './login-logs.schemas.ts';
import { qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import type { Runner } from '../../db/runner.ts';
import { rowOfUserInScope } from '../../access/data-scope.ts';
import { byUserColumn, scopeCondition, scopedPage } from '../../access/scoped-page.ts';

const COLUMNS = [
  'id', 'login_name', 'user_id', 'status', 'msg', 'ip', 'user_agent', 'browser', 'os', 'country', 'city', 'trace_id', 'created_at', 'factor',
] as const;

const SORT = { createdAt: 'created_at', loginName: sql`login_name COLLATE NOCASE`, ip: 'ip', status: 'status' };

/** Matches beyond which walking created_at (newest first) beats sorting every match. */
const BROAD = 1000;

/** Whether `column` starts with `text` on at least BROAD rows; reads at most BROAD index entries. */
async function isBroad(run: Runner, column: 'login_name' | 'ip', text: string, nocase: boolean) {
  const probe = whereStartsWith(qb.selectFrom('login_log').select('id'), column, text, { nocase }).limit(BROAD);
  const row = await run.first<{ n: number }>(
    qb
      .selectFrom(probe.as('p'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .compile(),
  );
  return Number(row?.n ?? 0) >= BROAD;
}

/**
 * The rows a page of the login log selects for `params` (FROM and WHERE), for anything that must
 * select the same rows; the page's options: the prefixes `unindexed`, or left out (`prefixes`
 * false), and its data scope (last).
 */
export function loginLogFilter(p: LoginLogPageInput['params'], o: { unindexed?: boolean; scope?: RawBuilder<boolean> | undefined; prefixes?: boolean } = {}) {
  let q = qb.selectFrom('login_log');
  if (o.prefixes !== false) {
    q = whereStartsWith(q, 'login_name', p.loginName, { nocase: true, unindexed: o.unindexed });
    q = whereStartsWith(q, 'ip', p.ip, { unindexed: o.unindexed });
  }
  if (p.status) q = q.where('status', '=', p.status);
  if (o.scope) q = q.where(o.scope);
  return whereCreatedBetween(q, 'created_at', p);
}

/** The login log's data scope: the user logging in (rows with no known user only under scope `all`). */
export const LOGIN_LOG_SCOPE = byUserColumn(sql.ref('login_log.user_id'));

/**
 * Name and address filters match by prefix, as index ranges on (login_name NOCASE, created_at) and
 * (ip, created_at); a '%…%' search would read the whole table (≈350 ms at a million rows). For
 * the default newest-first order the page is one statement that decides the plan itself
 * (PageOptions.seek): when the newest PROBE_ROWS rows hold the page, it walks created_at and
 * filters (a prefix matching many recent rows, "u"); otherwise it sorts the matches' index entries
 * (the prefix index holds created_at) — a prefix whose matches are all old walked nearly the
 * whole log (0.13–0.7 s at a million rows). The count uses the prefix index or the count tables.
 * Pages beyond the probe's reach keep the older two-step choice (isBroad).
 */
export async function pageLoginLogs(deps: Ports, run: Runner, req: LoginLogPageInput) {
  const p = req.params;
  const byTime = (req.sortField ?? 'createdAt') === 'createdAt';
  const prefixes = [
    ['login_name', p.loginName, true],
    ['ip', p.ip, false],
  ] as const;
  const given = prefixes.filter(([, text]) => text !== undefined);
  const seek = byTime && given.length > 0 && req.pageNo * req.pageSize <= PROBE_ROWS;
  let walkTime = seek;
  if (byTime && given.length > 0 && !seek) {
    walkTime = true;
    for (const [column, text, nocase] of given) if (!(await isBroad(run, column, text!, nocase))) walkTime = false;
  }
  const build = (unindexed: boolean, scope: RawBuilder<boolean> | undefined, only: readonly (typeof prefixes)[number][] = prefixes) =>
    loginLogFilter(p, { unindexed, scope, prefixes: only.length > 0 });
  const options = (scope: RawBuilder<boolean> | undefined) => {
    // The count tables hold every row: they answer only for scope `all` (no scope condition).
    const total = scope ? undefined : fromCountTables(p, build(false, undefined));
    return {
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered: build(walkTime, scope),
      counted: build(false, scope),
      matchFirst: seek ? build(false, scope, []) : undefined,
      seek: seek ? build(false, scope) : undefined,
      count: total && qb.selectNoFrom(total.as('n')),
      select: (q: SelectQueryBuilder<any, any, any>) => q.select(COLUMNS),
    sortColumns: SORT,
    defaultSort: 'createdAt' as const,
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
      factor: (r.factor ?? null) as 'totp' | 'passkey' | 'recovery' | null,
      createdAt: r.created_at as string,
    }),
    };
  };
  // Rows concern the user logging in; rows with no known user only under scope `all`.
  return (await scopedPage(run, req, options, LOGIN_LOG_SCOPE)).page;
}

/**
 * The exact total from the count tables (migrations 0011, 0017) for the filters they answer: none,
 * status and/or a date range (per-day counts), a loginName or an ip prefix with or without status
 * (their prefix trees), either prefix with a date range (its total minus its rows outside the dates,
 * when those are fewer). Undefined for both prefixes at once, counted the usual way: `direct`.
 */
function fromCountTables(p: LoginLogPageInput['params'], direct: SelectQueryBuilder<any, any, any>) {
  const { from, to } = createdBounds(p);
  const status = p.status;
  const everyDay = countByDays('login_log_day_counts', 'login_log', { status })!;
  const inDays = countByDays('login_log_day_counts', 'login_log', { status, from, to });
  if (p.ip !== undefined && p.loginName !== undefined) return undefined;
  const [tree, column, text] =
    p.ip !== undefined ? (['login_log_ip_tree', sql`(+ip)`, p.ip] as const) : (['login_log_name_tree', sql`(+login_name) COLLATE NOCASE`, p.loginName] as const);
  if (text === undefined) return inDays;
  const matching = countByTree(tree, text, status);
  if (!matching || (from === undefined && to === undefined)) return matching;
  const rest = sql`${startsWith(column, text)}${status === undefined ? sql`` : sql` AND status = ${status}`}`;
  return countWithinDates({ log: 'login_log', rest, matching, all: everyDay, inDays, from, to, direct });
}

/**
 * Deletes the given rows; ids that no longer exist, or whose rows are outside the caller's data
 * scope, are skipped alike (retention may have removed them meanwhile).
 */
export async function deleteLoginLogs(run: Runner, ids: number[]): Promise<number> {
  const auth = await run.caller();
  let q = qb.deleteFrom('login_log').where('id', 'in', idList(ids));
  if (!auth.isSuperAdmin) q = q.where(rowOfUserInScope(auth.userId, sql.ref('login_log.user_id')));
  // Rows returned, not numDeletedRows: D1's count includes what the count triggers (0011) wrote.
  return run.write({ batch: [q.returning('id').compile()], finish: ([deleted]) => deleted?.rows.length ?? 0 });
}

/** Deletes every row in the caller's data scope (everything for scope `all`). */
export async function clearLoginLogs(run: Runner): Promise<number> {
  const auth = await run.caller();
  const scope = await scopeCondition(run, auth, byUserColumn(sql.ref('login_log.user_id')));
  let q = qb.deleteFrom('login_log');
  let n = qb.selectFrom('login_log').select((eb) => eb.fn.countAll<number>().as('n'));
  if (scope) [q, n] = [q.where(scope), n.where(scope)];
  return run.write(countedDelete(n, q, scope ? undefined : 'login_log'));
}
