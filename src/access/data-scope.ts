import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { SUPER_ADMIN_ROLE } from '../core/permissions.ts';
import { qb, sqlText } from '../db/compile.ts';
import { guardStatement } from '../db/guards.ts';
import type { Runner } from '../db/runner.ts';

/**
 * Data scope as SQL (contract: "Organisations and data scope"). A user's scope is the union over
 * their enabled roles:
 *   all          everything (also any enabled superAdmin role)
 *   orgAndBelow  the user's organisation and everything below it
 *   org          the user's organisation only
 *   custom       the role's scopeOrgIds, each with everything below it
 *   self         the user's own rows
 * A user whose scope covers no organisation and who has no `all` role sees only themselves.
 *
 * Every fragment below takes the user as an SQL value (a bound id, or a column reference) and is
 * evaluated by SQLite when the statement runs: inside a write batch it judges the state the batch
 * sees, so a concurrent grant or move cannot slip between a check and the write. "Below" is one
 * index range of org_closure (ancestor_id = X).
 */

type UserRef = number | RawBuilder<unknown>;

/** Read through `+`: STAT4 builds re-plan a statement whenever a value the planner could use is re-bound (see http/auth.ts). */
const plus = (u: UserRef) => sql`+${u}`;

/** Roles of `u` that count: enabled ones (the user's scope), or all of them (what a target could hold). */
const roleJoin = (u: UserRef, anyStatus: boolean) =>
  anyStatus
    ? sql`user_role sur JOIN roles sr ON sr.id = sur.role_id WHERE sur.user_id = ${plus(u)}`
    : sql`user_role sur JOIN roles sr ON sr.id = sur.role_id WHERE sur.user_id = ${plus(u)} AND sr.status = 'enabled'`;

/** `u` sees everything: an `all` role or the superAdmin role. */
export const scopeAll = (u: UserRef, anyStatus = false) =>
  sql<boolean>`EXISTS (SELECT 1 FROM ${roleJoin(u, anyStatus)} AND (sr.data_scope = 'all' OR sr.code = ${sql.lit(SUPER_ADMIN_ROLE)}))`;

/** `u` has a role (enabled, unless `anyStatus`) of this scope kind. */
export const hasKind = (u: UserRef, kind: string, anyStatus = false) =>
  sql<boolean>`EXISTS (SELECT 1 FROM ${roleJoin(u, anyStatus)} AND sr.data_scope = ${sql.lit(kind)})`;

/** Organisations whose subtrees `u` sees: their own (orgAndBelow) and their custom lists. */
const scopeRoots = (u: UserRef, anyStatus: boolean) =>
  sql<number>`(SELECT su.org_id FROM users su WHERE su.id = ${plus(u)} AND su.org_id IS NOT NULL AND ${hasKind(u, 'orgAndBelow', anyStatus)}
    UNION ALL SELECT rs.org_id FROM role_scope_org rs JOIN ${roleJoin(u, anyStatus)} AND sr.data_scope = 'custom' AND rs.role_id = sr.id)`;

/** `u`'s own organisation when an `org` role covers exactly it. */
const scopeExact = (u: UserRef, anyStatus: boolean) =>
  sql<number>`(SELECT su.org_id FROM users su WHERE su.id = ${plus(u)} AND su.org_id IS NOT NULL AND ${hasKind(u, 'org', anyStatus)})`;

/**
 * Every organisation id `u` sees (not counting an `all` role), as a subquery. May name an
 * organisation twice (an `org` role's own organisation is also under an `orgAndBelow` one): every
 * use is a membership test (IN / EXISTS), and a list read from it is deduplicated (callerScopeOf).
 * UNION ALL, not UNION: the dedupe sorted every id of a broad scope (a temp b-tree, ~0.013 ms for
 * 259 organisations) on every scoped page and scope read.
 */
export const scopeOrgs = (u: UserRef, anyStatus = false) =>
  sql<number>`(SELECT oc.descendant_id FROM org_closure oc WHERE oc.ancestor_id IN ${scopeRoots(u, anyStatus)}
    UNION ALL SELECT * FROM ${scopeExact(u, anyStatus)})`;

/** The caller's enabled roles, as `sr` rows (for the conditions below, which look at one role at a time). */
const enabledRolesOf = (c: UserRef) =>
  sql`user_role sur JOIN roles sr ON sr.id = sur.role_id WHERE sur.user_id = ${plus(c)} AND sr.status = 'enabled'`;

/**
 * The role `sr` (one of `c`'s) covers organisation `org` (an SQL value, may be NULL): orgAndBelow
 * of c's organisation, org = exactly c's organisation, custom = its listed subtrees. Each kind is
 * one or two primary-key lookups (users, org_closure (ancestor, descendant), role_scope_org).
 */
const roleCoversOrg = (c: UserRef, org: RawBuilder<unknown>) =>
  sql<boolean>`((sr.data_scope = 'orgAndBelow' AND EXISTS (SELECT 1 FROM users su JOIN org_closure soc ON soc.ancestor_id = su.org_id
      WHERE su.id = ${plus(c)} AND soc.descendant_id = ${org}))
    OR (sr.data_scope = 'org' AND ${org} = (SELECT su.org_id FROM users su WHERE su.id = ${plus(c)}))
    OR (sr.data_scope = 'custom' AND EXISTS (SELECT 1 FROM role_scope_org srs JOIN org_closure soc ON soc.ancestor_id = srs.org_id
      WHERE srs.role_id = sr.id AND soc.descendant_id = ${org})))`;

/** `c`'s scope covers at least one organisation (same as `EXISTS scopeOrgs(c)`: every org is its own descendant). */
const coversOrgs = (c: UserRef) =>
  sql<boolean>`EXISTS (SELECT 1 FROM ${enabledRolesOf(c)} AND (
    (sr.data_scope IN ('orgAndBelow', 'org') AND (SELECT su.org_id FROM users su WHERE su.id = ${plus(c)}) IS NOT NULL)
    OR (sr.data_scope = 'custom' AND EXISTS (SELECT 1 FROM role_scope_org srs WHERE srs.role_id = sr.id))))`;

/** `u` sees their own rows: a `self` role, or a scope that covers no organisation at all. */
export const scopeSelf = (u: UserRef) => sql<boolean>`(${hasKind(u, 'self', false)} OR NOT ${coversOrgs(u)})`;

/**
 * Organisation `org` (an SQL value, may be NULL) is in `caller`'s scope, leaving `all` aside.
 * Correlated form: a few index lookups per role of the caller, for detail reads and guards.
 */
export const orgInScope = (caller: UserRef, org: RawBuilder<unknown>) =>
  sql<boolean>`EXISTS (SELECT 1 FROM ${enabledRolesOf(caller)} AND ${roleCoversOrg(caller, org)})`;

/**
 * The row of user `userId` (column refs; `orgId` their organisation) is in `caller`'s scope.
 * THE rule for one user; everything that concerns a user (sessions, logs, files) applies it to
 * that user. One EXISTS over the caller's enabled roles (all / superAdmin / covers the org / self
 * is the user), plus "a scope covering no organisation sees its owner", which SQLite only looks at
 * when the user is the caller. Its only bound value is `caller` (written `+?`), so its text can be
 * compiled once (findUserInScope) and the plan stays cached.
 */
export const userInScope = (caller: UserRef, userId: RawBuilder<unknown>, orgId: RawBuilder<unknown>) =>
  sql<boolean>`(EXISTS (SELECT 1 FROM ${enabledRolesOf(caller)} AND (sr.data_scope = 'all' OR sr.code = ${sql.lit(SUPER_ADMIN_ROLE)}
      OR ${roleCoversOrg(caller, orgId)} OR (sr.data_scope = 'self' AND ${userId} = ${plus(caller)})))
    OR (${userId} = ${plus(caller)} AND NOT ${coversOrgs(caller)}))`;

/** Users (ids, as a subquery) in `caller`'s scope among `candidates` (an SQL list or subquery). */
export const usersInScope = (caller: number, candidates: RawBuilder<unknown>) =>
  sql<number>`(SELECT siu.id FROM users siu WHERE siu.id IN ${candidates} AND ${userInScope(caller, sql.ref('siu.id'), sql.ref('siu.org_id'))})`;

/** A caller's effective scope, read once for page queries (which bind it as plain lists). */
export interface CallerScope {
  all: boolean;
  orgIds: number[];
  self: boolean;
}

type ScopeRow = { all_: number; orgs: string | null; self_: number };

/**
 * `?1`'s effective scope in one row (all_, orgs as a JSON list, self_), from the same fragments as
 * the guards: one constant text, compiled once, so the statement stays prepared and planned.
 */
export const CALLER_SCOPE_SQL = (() => {
  const c = sql.raw('?1');
  return sqlText(sql`SELECT ${scopeAll(c)} AS all_, (SELECT json_group_array(descendant_id) FROM ${scopeOrgs(c)}) AS orgs, ${scopeSelf(c)} AS self_`);
})();

/**
 * The statement that reads user `callerId`'s effective scope (CALLER_SCOPE_SQL), for a batch;
 * callerScopeOf turns its row into a CallerScope. Usable before the caller's auth row is known
 * (a super admin's row says `all`: scopeAll covers the superAdmin role).
 */
export function callerScopeQuery(callerId: number) {
  return { sql: CALLER_SCOPE_SQL, parameters: [callerId] };
}

/** The CallerScope a row of callerScopeQuery describes. */
export function callerScopeOf(found: unknown): CallerScope {
  const row = found as ScopeRow | undefined;
  if (!row || row.all_ === 1) return { all: true, orgIds: [], self: true };
  const listed = (JSON.parse(row.orgs ?? '[]') as (number | null)[]).filter((id): id is number => id !== null);
  const orgIds = [...new Set(listed)].sort((a, b) => a - b);
  return { all: false, orgIds, self: row.self_ === 1 };
}

/** Reads the caller's effective scope with one statement (none for a known super admin). */
export async function callerScope(run: Runner): Promise<CallerScope> {
  if (run.knownSuper) return { all: true, orgIds: [], self: true };
  return callerScopeOf(await run.first<ScopeRow>(callerScopeQuery(run.userId)));
}

/**
 * A page filter for rows concerning a user: `orgCol` in the scope's organisations, or `userCol`
 * the caller when the scope includes self. `undefined` when the scope is `all` (no filter). The
 * organisation list is ONE bound JSON parameter (D1 caps parameters at 100 per statement).
 */
export function scopeFilter(
  scope: CallerScope,
  callerId: number,
  orgCol: RawBuilder<unknown>,
  userCol: RawBuilder<unknown>,
  opts: { unindexed?: boolean } = {},
) {
  if (scope.all) return undefined;
  // A unary plus keeps the planner off the org index, to walk the sort order's index instead.
  const col = opts.unindexed ? sql`(+${orgCol})` : orgCol;
  const orgs = sql`${col} IN (SELECT value FROM json_each(${JSON.stringify(scope.orgIds)}))`;
  return scope.self ? sql<boolean>`(${orgs} OR ${userCol} = ${callerId})` : sql<boolean>`${orgs}`;
}

/** Rows whose user column names a user in scope (sessions, logs, files), as a page filter. */
export function userColumnFilter(scope: CallerScope, callerId: number, userCol: RawBuilder<unknown>) {
  if (scope.all) return undefined;
  const inner = scopeFilter(scope, callerId, sql.ref('sc_u.org_id'), sql.ref('sc_u.id'))!;
  return sql<boolean>`${userCol} IN (SELECT sc_u.id FROM users sc_u WHERE ${inner})`;
}

/**
 * A row concerning the user in `userCol` (a log row's user, a file's creator) is in `caller`'s
 * scope; a row with no known user (NULL) only under scope `all`. Correlated form, for reads and
 * writes by id.
 */
export const rowOfUserInScope = (caller: number, userCol: RawBuilder<unknown>) =>
  sql<boolean>`(${scopeAll(caller)} OR EXISTS (SELECT 1 FROM users ru WHERE ru.id = ${userCol}
    AND ${userInScope(caller, sql.ref('ru.id'), sql.ref('ru.org_id'))}))`;

/**
 * "Backups hold every row": the statement (for a read plan: it travels with the rows it guards)
 * saying whether `userId`'s scope is `all` (`all_` 1/0; a super admin's is), and the same rule as
 * a guard for the head of a write batch (none for a super admin; 403 scope_all_only).
 */
export const scopeAllStatement = (userId: number) => sql<{ all_: number }>`SELECT ${scopeAll(userId)} AS all_`.compile(qb);
export const scopeAllOf = (rows: readonly unknown[] | undefined) => (rows?.[0] as { all_?: number } | undefined)?.all_ === 1;
export function scopeAllGuard(auth: Caller): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('scope_all_only', sql`NOT ${scopeAll(auth.userId)}`)];
}
