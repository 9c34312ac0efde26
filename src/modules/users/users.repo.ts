import { sql, type CompiledQuery, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { guardStatement } from '../../db/guards.ts';
import type { Ports } from '../../core/ports.ts';
import { idList } from '../../db/id-list.ts';
import { qb, sqlText } from '../../db/compile.ts';
import { perApp } from '../../core/per-app.ts';
import { readsOf, type Stmt } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { pageStatements, whereContains, whereCreatedBetween, whereStartsWith, type PageOptions, type PageStatements } from '../../core/pagination.ts';
import { USER_COLUMNS, USER_FROM, USER_POST_IDS_SQL, USER_SELECT, toUser, type PublicUserRow, type User } from './user.model.ts';
import type { UserPageInput } from './users.schemas.ts';
import { callerScopeOf, scopeAll, scopeFilter, scopeOrgs, scopeSelf, userInScope, type CallerScope } from '../../access/data-scope.ts';

export const FIND_USER_SQL = `SELECT ${USER_SELECT} FROM ${USER_FROM} WHERE users.id = +?`;

/** A user's public columns (never password_hash) with the org name, or undefined. A hot read: plain SQL, cached statement. */
export function findUser(run: Runner, id: number) {
  return run.first<PublicUserRow>({ sql: FIND_USER_SQL, parameters: [id] });
}

/**
 * The data scope is folded INTO the user's read: one statement, compiled once, binding the user id
 * (?1) and the caller id (?2, known from the token before the auth statement runs). Keep it one
 * statement when batching reads: the scope condition is what makes an out-of-scope user a 404.
 */
const FIND_USER_IN_SCOPE_SQL = `SELECT ${USER_SELECT} FROM ${USER_FROM} WHERE users.id = +?1 AND ${sqlText(
  userInScope(sql.raw('?2'), sql.ref('users.id'), sql.ref('users.org_id')),
)}`;

/**
 * The statement findUserInScope runs, for a plan. While the caller has not been judged the scope
 * rides in the statement for everyone (it is `all` for a super admin), and the read goes out with
 * the auth row.
 */
export function userInScopeStatement(run: Runner, id: number): Stmt {
  return run.knownSuper ? { sql: FIND_USER_SQL, parameters: [id] } : { sql: FIND_USER_IN_SCOPE_SQL, parameters: [id, run.userId] };
}

/** The user if the caller may see them (data scope), else undefined: one cached statement (above). */
export function findUserInScope(run: Runner, id: number) {
  return run.first<PublicUserRow>(userInScopeStatement(run, id));
}

/** The user's public row with the org name, as a statement (the last of a write batch: its answer). */
export function userRowQuery(id: RawBuilder<unknown>): CompiledQuery {
  return sql`SELECT ${sql.raw(USER_SELECT)} FROM ${sql.raw(USER_FROM)} WHERE users.id = ${id}`.compile(qb);
}

/** Guard: the user exists (else the batch fails with 404 "User not found", through out_of_scope's answer). */
export function userExistsGuard(id: number): CompiledQuery {
  return guardStatement('out_of_scope', sql`NOT EXISTS (SELECT 1 FROM users WHERE id = ${id})`);
}

/** Case-insensitive lookup, matching the users_login_name NOCASE index. */
export function userByLoginNameQuery(loginName: string): CompiledQuery {
  return qb
    .selectFrom('users')
    .leftJoin('orgs', 'orgs.id', 'users.org_id')
    .select([...USER_COLUMNS.map((c) => `users.${c}` as const), 'orgs.name as org_name'])
    .where(sql<boolean>`users.login_name = ${loginName} COLLATE NOCASE`)
    .compile();
}

/** Ends every live session of the users, so a disable or reset applies on their next request. */
export function revokeSessions(userIds: number[], now: string): CompiledQuery {
  return qb
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', 'in', idList(userIds))
    .where('revoked_at', 'is', null)
    .compile();
}

/** Statements that replace a user's role set (an unknown role id fails the batch on its foreign key). */
export function grantStatements(userId: number, roleIds: readonly number[]): CompiledQuery[] {
  const out = [qb.deleteFrom('user_role').where('user_id', '=', userId).compile()];
  if (roleIds.length > 0) {
    out.push(sql`INSERT INTO user_role (user_id, role_id) SELECT ${userId}, value FROM json_each(${JSON.stringify(roleIds)})`.compile(qb));
  }
  return out;
}

type Query = SelectQueryBuilder<any, any, any>;

const SORT_COLUMNS = {
  id: 'users.id',
  loginName: 'users.login_name',
  nickName: 'users.nick_name',
  createdAt: 'users.created_at',
  updatedAt: 'users.updated_at',
  lastLoginAt: 'users.last_login_at',
} as const;

/** Users in scope beyond which walking the sort order beats sorting every match. */
const BROAD = 1000;

/** How many users the organisations `orgs` (an SQL subquery or list of org ids) hold: the sum of their counts, kept by triggers (0010). */
const usersOfOrgs = (orgs: RawBuilder<unknown>) => sql<number>`(SELECT coalesce(sum(n), 0) FROM org_user_counts WHERE org_id IN ${orgs})`;

/**
 * `?1`'s scope as CALLER_SCOPE_SQL reads it (all_, orgs, self_) and `users_n`, how many users its
 * organisations hold (their counts summed over the scope's subquery: exact); NULL when the scope
 * is `all`. One constant text. The size tells a broad scope from a narrow one, and is the total of
 * a page filtered by nothing but the scope. The JSON list of the organisations is built only when
 * the page binds it (`?2` = 1: other filters; or a scope that includes self): a broad scope's list
 * (hundreds of ids, built and parsed back) cost about as much as its page.
 */
const USERS_SCOPE_SQL = (() => {
  const c = sql.raw('?1');
  return sqlText(sql`WITH s AS MATERIALIZED (SELECT ${scopeAll(c)} AS all_, ${scopeSelf(c)} AS self_)
  SELECT s.all_, s.self_,
    CASE WHEN s.all_ OR NOT (?2 OR s.self_) THEN NULL ELSE (SELECT json_group_array(descendant_id) FROM ${scopeOrgs(c)}) END AS orgs,
    CASE WHEN s.all_ THEN NULL ELSE ${usersOfOrgs(scopeOrgs(c))} END AS users_n
  FROM s`);
})();

/** "That organisation and everything below it" (the page's `orgId`), as a subquery; bound through `+` (no STAT4 re-planning). */
const orgAndBelow = (orgId: number) => sql<number>`(SELECT descendant_id FROM org_closure WHERE ancestor_id = +${orgId})`;

/** The page's options over these rows (`unsearched`: the same without the part-of search, for PageOptions.matchFirst). */
type PageOptionsOf = (filteredRows: Query, countedRows: Query, unsearched?: Query) => PageOptions<keyof typeof SORT_COLUMNS, any, User>;

/** How to read a page of users of many organisations: walk the sort order and keep the matches, or read their org-index entries and sort. */
type Plan = 'walk' | 'sort';
const planFor = (size: number): Plan => (size >= BROAD ? 'walk' : 'sort');

/**
 * A page of the users of the organisations `orgs` with no other filter. Its total is the sum of
 * their counts (no user is counted), and the rows come from the plan that suits the size: a broad
 * set walks the sort order's index and keeps the matches (the first page within a few dozen rows;
 * `+org_id` keeps the planner off the org index), a narrow one reads its (org_id, created_at)
 * entries and sorts at most BROAD rows. Given a `plan`, one statement, and the count is the
 * caller's to give finish() (read elsewhere); otherwise both plans go in the same batch, each
 * gated (LIMIT 0 unless `gate` and its size hold), with the sum as the count.
 */
function orgsPage(
  req: UserPageInput,
  options: PageOptionsOf,
  orgs: RawBuilder<unknown>,
  { gate, plan }: { gate?: RawBuilder<unknown>; plan?: Plan } = {},
): PageStatements<User> {
  const of = (col: RawBuilder<unknown>) => qb.selectFrom('users').where(sql<boolean>`${col} IN ${orgs}`);
  const walk = options(of(sql`(+users.org_id)`), of(sql.ref('users.org_id')));
  const sorted = options(of(sql.ref('users.org_id')), of(sql.ref('users.org_id')));
  if (plan) return pageStatements(req, { ...(plan === 'walk' ? walk : sorted), gate, countedElsewhere: true });
  const size = usersOfOrgs(orgs);
  const when = (cond: RawBuilder<unknown>) => (gate ? sql`(${gate}) AND ${cond}` : cond);
  const broad = pageStatements(req, { ...walk, gate: when(sql`${size} >= ${BROAD}`), count: qb.selectNoFrom(size.as('n')), countGate: gate });
  const narrow = pageStatements({ ...req, searchCount: false }, { ...sorted, gate: when(sql`${size} < ${BROAD}`) });
  return {
    statements: [...broad.statements, ...narrow.statements],
    finish: (results) => {
      const [broadRows = [], ...rest] = results;
      const narrowRows = results[broad.statements.length] ?? [];
      return broad.finish([broadRows.length > 0 ? broadRows : narrowRows, ...rest.slice(0, broad.statements.length - 1)]);
    },
  };
}

/**
 * Per app (its config object: the database paths can be per request, under read replication) and caller, the plan their last users page found for their scope
 * (organisations only). A HINT, not a cache of answers: it only chooses which statements go out
 * in the first batch; the batch reads the scope again, and a wrong or stale hint (a moved caller,
 * a new role) costs a second trip, never a wrong page. Bounded: emptied at HINTS_MAX callers.
 */
const PLAN_HINTS = Symbol('users page plan hints');
const HINTS_MAX = 10_000;
const hintsOf = (deps: Ports) => perApp(deps.config, PLAN_HINTS, () => new Map<number, Plan>());

/**
 * The rows a page of users selects for `params` before data scope (the WHERE added to `q`), for
 * anything that must select the same rows (the page, the export). `search` false: without the
 * part-of search of the nick name (PageOptions.matchFirst).
 */
export function userFilter(p: UserPageInput['params'], q: Query = qb.selectFrom('users'), search = true): Query {
  if (p.orgId !== undefined) q = q.where('users.org_id', 'in', orgAndBelow(p.orgId));
  // Login name and phone match by prefix on their indexes (a '%…%' scan of 100k users cost ~30 ms);
  // the nick name is free text and matches anywhere.
  q = whereStartsWith(q, 'users.login_name', p.loginName, { nocase: true });
  if (search) q = whereContains(q, 'users.nick_name', p.nickName);
  q = whereStartsWith(q, 'users.phone', p.phone);
  if (p.status) q = q.where('users.status', '=', p.status);
  const postId = p.postId;
  if (postId !== undefined) {
    q = q.where((eb) =>
      eb.exists(eb.selectFrom('user_post').select('user_post.user_id').whereRef('user_post.user_id', '=', 'users.id').where('user_post.post_id', '=', postId)),
    );
  }
  const roleId = p.roleId;
  if (roleId !== undefined) {
    q = q.where((eb) =>
      eb.exists(eb.selectFrom('user_role').select('user_role.user_id').whereRef('user_role.user_id', '=', 'users.id').where('user_role.role_id', '=', roleId)),
    );
  }
  return whereCreatedBetween(q, 'users.created_at', p);
}

/**
 * A page of the users in the caller's data scope. `orgId` means that organisation and everything
 * below it (one closure-table range). A page filtered by organisations only (the scope's, `orgId`'s)
 * is counted from org_user_counts (see orgsPage); otherwise the scope is read once and bound as a
 * list, so the planner sees plain `org_id IN (…)` on the (org_id, created_at) index.
 */
export async function pageUsers(deps: Ports, run: Runner, req: UserPageInput) {
  const p = req.params;
  const me = run.userId;
  const filtered = (callerSees: CallerScope | undefined, unindexed = false, search = true) => {
    let q: Query = qb.selectFrom('users');
    const scope = callerSees && scopeFilter(callerSees, me, sql.ref('users.org_id'), sql.ref('users.id'), { unindexed });
    if (scope) q = q.where(scope);
    return userFilter(p, q, search);
  };
  const options: PageOptionsOf = (filteredRows, countedRows, unsearched) => ({
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: filteredRows,
    counted: countedRows,
    select: (qb: Query) =>
      qb
        .leftJoin('orgs', 'orgs.id', 'users.org_id')
        .select([...USER_COLUMNS.map((c) => `users.${c}` as const), 'orgs.name as org_name', sql.raw<string>(USER_POST_IDS_SQL).as('post_ids')]),
    sortColumns: SORT_COLUMNS,
    defaultSort: 'createdAt' as const,
    idColumn: 'users.id',
    map: toUser,
    matchFirst: p.nickName !== undefined ? unsearched : undefined,
  });
  // Filtered by organisations only (`orgId` and/or the scope's): served by orgsPage.
  const orgsOnly = Object.entries(p).every(([key, value]) => key === 'orgId' || value === undefined);
  // The page as a caller of scope `all` sees it (on the condition `gate`, when given).
  const unscoped = (gate?: RawBuilder<unknown>) =>
    orgsOnly && p.orgId !== undefined ? orgsPage(req, options, orgAndBelow(p.orgId), { gate }) : pageStatements(req, { ...options(filtered(undefined), filtered(undefined), filtered(undefined, false, false)), gate });
  const read = (page: PageStatements<User>) => run.read({ reads: page.statements, finish: page.finish });
  // A known super admin: the page, unfiltered.
  if (run.knownSuper) return read(unscoped());
  // Otherwise one batch (which carries the caller's auth statement, db/runner.ts): the caller's
  // scope with its size, and the page speculatively, ON THE CONDITION in SQL that it is the right
  // one (for anyone else those statements read nothing): as the caller's last page found their
  // scope (organisations only, of that size; the scope is a subquery there), or else as a caller
  // of scope `all` sees it. Only a miss needs a second trip, with the scope as read then.
  const hints = hintsOf(deps);
  const hinted = orgsOnly && p.orgId === undefined ? hints.get(me) : undefined;
  const first = hinted
    ? orgsPage(req, options, scopeOrgs(me), { plan: hinted, gate: sql`NOT ${scopeAll(me)} AND NOT ${scopeSelf(me)}` })
    : unscoped(scopeAll(me));
  const [scopeRows = [], ...pageRows] = await run.read(readsOf({ sql: USERS_SCOPE_SQL, parameters: [me, orgsOnly ? 0 : 1] }, ...first.statements));
  const callerSees = callerScopeOf(scopeRows[0]);
  const size = Number((scopeRows[0] as { users_n?: number } | undefined)?.users_n ?? 0);
  if (callerSees.all || callerSees.self) hints.delete(me);
  else {
    if (hints.size >= HINTS_MAX) hints.clear();
    hints.set(me, planFor(size));
  }
  if (callerSees.all) return hinted ? read(unscoped()) : first.finish(pageRows);
  // Organisations only, and a scope of organisations only (no "self" row on top): counted from
  // org_user_counts over the scope's organisations (those under `orgId`, if given).
  if (orgsOnly && !callerSees.self) {
    const counted = req.searchCount ? [{ n: size }] : [];
    if (hinted === planFor(size)) return first.finish([pageRows[0] ?? [], counted]);
    // The scope's organisations as read now, inside the statement (the row above carries no list here).
    const list = scopeOrgs(me);
    if (p.orgId === undefined) {
      const page = orgsPage(req, options, list, { plan: planFor(size) });
      return run.read({ reads: page.statements, finish: (rows) => page.finish([rows[0] ?? [], counted]) });
    }
    return read(orgsPage(req, options, sql`(SELECT descendant_id FROM org_closure WHERE ancestor_id = +${p.orgId} AND descendant_id IN ${list})`));
  }
  // A scope with many users is served best by walking the sort order and filtering (the first page
  // is found after a few dozen rows); a small one by its (org_id, created_at) entries and a sort of
  // at most BROAD rows. The size (users of the scope's organisations, from their counts) tells which.
  return read(pageStatements(req, options(filtered(callerSees, size >= BROAD), filtered(callerSees, false), filtered(callerSees, size >= BROAD, false))));
}
