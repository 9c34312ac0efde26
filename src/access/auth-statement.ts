import { CompiledQuery } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { AppError, forbidden } from '../core/errors.ts';
import { MFA_REQUIRED_MSG } from '../db/guards.ts';
import { perApp } from '../core/per-app.ts';
import { SUPER_ADMIN_ROLE, type PermissionCode } from '../core/permissions.ts';
import type { CallerCheck } from '../db/runner.ts';
import { holdsCodeSql } from './holds-code.ts';

/**
 * Two statements, read together, answer everything a protected request needs: the session is live
 * and its user enabled, and whether the user is a super admin or holds the route's code through an
 * enabled role and an enabled menu. The session and the user's status are read on every request,
 * so a logout or a disable applies on the next one. Who holds what was most of the cost: it is kept
 * per app (process / isolate) and user under the `menus` version (migration 0018: bumped by
 * triggers on every write to menus, role_menu, user_role and roles' status and code, exactly what
 * those answers depend on), and the second statement computes them only when the version is not the
 * one the cache holds: a grant or revoke still applies on the very next request.
 * Parameters are written `+?`: SQLite builds with STAT4 (Bun's does) re-plan a join every time a
 * parameter the planner could use is re-bound, which made this statement cost ~20 µs instead of
 * ~2 µs; the unary plus hides the value from the planner and keeps the indexes.
 */
export const isSuperSql = (userRef: string) => `EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
          WHERE ur.user_id = ${userRef} AND r.status = 'enabled' AND r.code = '${SUPER_ADMIN_ROLE}')`;
/**
 * The user holds an enabled role that requires a second factor (migration 0025). Derived from the
 * user's roles like the codes, so it is cached with them under the `menus` version (a trigger bumps
 * it when a role's flag changes).
 */
export const mfaRoleSql = (userRef: string) => `EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
          WHERE ur.user_id = ${userRef} AND r.status = 'enabled' AND r.mfa_required = 1)`;
/** Session live and its user enabled; binds the session id, the user id and now. */
const LIVE_SESSION = `s.id = +? AND s.user_id = +? AND s.revoked_at IS NULL AND s.expires_at > +? AND u.status = 'enabled'`;
/**
 * The auth statements. First the session: ?1 the session id, ?2 the user id, ?3 now; one row
 * (login name, `menus` version: -2 when its row is missing) when the session is live and its user
 * enabled. Then who holds what: ?1 the code (NULL: none needed), ?2 the user id, ?3 the `menus`
 * version the cache holds for this user and code (-1: none); no row when that version is still
 * current (a constant WHERE, evaluated once before anything is read), else one row.
 */
export const AUTH_SESSION_SQL = `SELECT u.login_name AS login_name, coalesce(v.n, -2) AS version, u.mfa_enabled AS mfa_enabled
FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN cache_versions v ON v.name = 'menus'
WHERE s.id = +?1 AND s.user_id = +?2 AND s.revoked_at IS NULL AND s.expires_at > +?3 AND u.status = 'enabled'`;
export const AUTH_HOLDS_SQL = `SELECT ${isSuperSql('+?2')} AS is_super,
  CASE WHEN ?1 IS NULL THEN 0 ELSE ${holdsCodeSql('+?2', '+?1')} END AS has_perm,
  ${mfaRoleSql('+?2')} AS mfa_role
WHERE NOT coalesce((SELECT n FROM cache_versions WHERE name = 'menus') = +?3, 0)`;

/**
 * The session a signed link names is live (as LIVE_SESSION, the link carrying no user id): it
 * exists, is not revoked or expired, and its user is enabled. Binds the session id and now; a
 * condition for the link's file read (modules/files), so the check rides in that statement.
 */
export const LINK_SESSION_LIVE = `EXISTS (SELECT 1 FROM sessions ls JOIN users lu ON lu.id = ls.user_id
  WHERE ls.id = +? AND ls.revoked_at IS NULL AND ls.expires_at > +? AND lu.status = 'enabled')`;

/** The session statement's 401 (ended, revoked, expired, or its user disabled or deleted). */
export const SESSION_ENDED = 'Session has ended, please log in again';

interface SessionRow {
  login_name: string;
  version: number;
  mfa_enabled: number;
}
interface HoldsRow {
  is_super: number;
  has_perm: number;
  mfa_role: number;
}

/** What a user holds as of one `menus` version: super admin or not, and the codes asked about so far. */
interface Holdings {
  version: number;
  isSuper: boolean;
  /** Holds an enabled mfaRequired role. */
  mfaRole: boolean;
  codes: Map<string, boolean>;
}

/** Per app (the object the guard hands in: its deps) and user; bounded, emptied when full. */
const HOLDINGS = Symbol('holdings');
const USERS_HELD = 10_000;
const NO_CODE = '';
const holdingsCache = (owner: object) => perApp(owner, HOLDINGS, () => new Map<number, Holdings>());

/**
 * The caller's check for one request (db/runner.ts): `code` is the route's permission code (null:
 * any logged-in user); `userId`/`sessionId` come from the verified token; `now` is the request's
 * time; `owner` keys the per-app cache of who holds what (see AUTH_HOLDS_SQL).
 */
export function callerCheck(
  code: PermissionCode | null,
  userId: number,
  sessionId: string,
  now: () => number,
  owner: object,
  /** The route stays open to a session restricted to enrolling a second factor (mfa/*, getLoginUserInformation, logout). */
  mfaEnrolment = false,
): CallerCheck {
  const holdings = ownerHoldings(owner, userId, code);
  return {
    userId,
    sessionId,
    statements: [
      { sql: AUTH_SESSION_SQL, parameters: [sessionId, userId, new Date(now()).toISOString()] },
      { sql: AUTH_HOLDS_SQL, parameters: [code, userId, holdings.heldVersion] },
    ],
    judge([sessionRows, holdsRows]) {
      const row = sessionRows?.[0] as SessionRow | undefined;
      if (!row) return { refusal: new AppError('UNAUTHORIZED', SESSION_ENDED) };
      const { isSuper, holds, mfaRole } = holdings.judge(row.version, holdsRows?.[0]);
      const mfaPending = mfaRole && row.mfa_enabled !== 1;
      const caller: Caller = { userId, sessionId, loginName: row.login_name, isSuperAdmin: isSuper, ...(mfaPending ? { mfaPending } : {}) };
      // A session restricted to enrolling: every other operation is refused, whatever the codes.
      if (mfaPending && !mfaEnrolment) return { caller, refusal: new AppError('FORBIDDEN', MFA_REQUIRED_MSG) };
      const permitted = code === null || isSuper || holds;
      return permitted ? { caller } : { caller, refusal: forbidden() };
    },
    // "now" is taken when the batch is built: the guards judge the state it runs on.
    guards: (caller) => withMfa(writeGuards(code, caller, new Date(now()).toISOString()), userId, mfaEnrolment),
    openGuards: () => withMfa(openGuards(code, userId, sessionId, new Date(now()).toISOString()), userId, mfaEnrolment),
  };
}

/**
 * Who holds what for one user and code, as far as this request goes: the `menus` version the cache
 * holds for them (-1: none, AUTH_HOLDS_SQL then computes the answers), and the verdict from the
 * `menus` version the auth row read and AUTH_HOLDS_SQL's row (none: the cached answers are current).
 * Shared by the token's check and an API key's (access/api-key-statement.ts: the key's owner).
 */
export function ownerHoldings(owner: object, userId: number, code: PermissionCode | null) {
  const cache = holdingsCache(owner);
  // The entry this request builds on (a concurrent refresh replaces it; this one stays as read).
  const held = cache.get(userId);
  const known = held?.codes.get(code ?? NO_CODE);
  const heldVersion = held && known !== undefined ? held.version : -1;
  return {
    heldVersion,
    judge(version: number, freshRow: unknown): { isSuper: boolean; holds: boolean; mfaRole: boolean } {
      const fresh = freshRow as HoldsRow | undefined;
      // No row: the version is the one held, the cached answers are current.
      if (!fresh) return { isSuper: held!.isSuper, holds: known!, mfaRole: held!.mfaRole };
      const isSuper = fresh.is_super === 1;
      const holds = fresh.has_perm === 1;
      const mfaRole = fresh.mfa_role === 1;
      remember(cache, userId, version, isSuper, mfaRole, code ?? NO_CODE, holds);
      return { isSuper, holds, mfaRole };
    },
  };
}

/** Keeps what the auth statement computed, under the version it read (none when the version row is missing: -2). */
function remember(cache: Map<number, Holdings>, userId: number, version: number, isSuper: boolean, mfaRole: boolean, code: string, holds: boolean) {
  if (version < 0) return;
  let entry = cache.get(userId);
  if (!entry || entry.version !== version || entry.isSuper !== isSuper || entry.mfaRole !== mfaRole) {
    if (cache.size >= USERS_HELD) cache.clear();
    entry = { version, isSuper, mfaRole, codes: new Map() };
    cache.set(userId, entry);
  }
  entry.codes.set(code, holds);
}

/** writeGuards for a batch sent before the caller was judged: a super admin or a holder of `code` passes. */
function openGuards(code: PermissionCode | null, userId: number, sessionId: string, now: string): CompiledQuery[] {
  const guards = [sessionGuard(sessionId, userId, now)];
  if (code !== null) {
    guards.push(
      CompiledQuery.raw(`INSERT INTO auth_guard_failures (rule) SELECT 'not_permitted' WHERE NOT (${isSuperSql('+?')} OR ${holdsCodeSql('+?')})`, [
        userId,
        code,
        userId,
      ]),
    );
  }
  return guards;
}

/**
 * The restriction as a guard at the head of a write batch (migration 0025): a caller who holds an
 * enabled mfaRequired role and has no active factor when the batch runs is refused whole (403), so
 * a role made mfaRequired after the judgement still stops the write. None on enrolment routes.
 */
const MFA_GUARD_SQL = `INSERT INTO mfa_guard_failures (rule) SELECT 'mfa_required'
  WHERE ${mfaRoleSql('+?1')} AND NOT EXISTS (SELECT 1 FROM users mu WHERE mu.id = +?1 AND mu.mfa_enabled = 1)`;

function withMfa(guards: CompiledQuery[], userId: number, mfaEnrolment: boolean): CompiledQuery[] {
  if (!mfaEnrolment) guards.push(CompiledQuery.raw(MFA_GUARD_SQL, [userId]));
  return guards;
}

const sessionGuard = (sessionId: string, userId: number, now: string) =>
  CompiledQuery.raw(
    `INSERT INTO auth_guard_failures (rule) SELECT 'session_ended' WHERE NOT EXISTS (SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE ${LIVE_SESSION})`,
    [sessionId, userId, now],
  );

/**
 * The auth statement's verdict as guard statements (migrations/0015), for the head of a write
 * batch: the batch fails whole with 401 when the session ended or the user was disabled, with 403
 * when the caller no longer holds `code` (null: none needed), and, for a write planned as a super
 * admin's (the scope and authority checks are left out for one), when they are no longer one.
 */
function writeGuards(code: PermissionCode | null, caller: Caller, now: string): CompiledQuery[] {
  const { userId, sessionId } = caller;
  const guards = [sessionGuard(sessionId, userId, now)];
  if (caller.isSuperAdmin) {
    guards.push(CompiledQuery.raw(`INSERT INTO auth_guard_failures (rule) SELECT 'not_permitted' WHERE NOT ${isSuperSql('+?')}`, [userId]));
  } else if (code !== null) {
    guards.push(
      CompiledQuery.raw(`INSERT INTO auth_guard_failures (rule) SELECT 'not_permitted' WHERE NOT ${holdsCodeSql('+?')}`, [code, userId]),
    );
  }
  return guards;
}
