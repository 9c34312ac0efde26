import { CompiledQuery } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { AppError, forbidden } from '../core/errors.ts';
import { SUPER_ADMIN_ROLE, type PermissionCode } from '../core/permissions.ts';
import type { CallerCheck } from '../db/runner.ts';
import { holdsCodeSql } from './holds-code.ts';

/**
 * One statement answers everything a protected request needs: the session is live, its user is
 * enabled, and whether the user is a super admin or holds the route's code through an enabled
 * role and an enabled menu. Nothing is cached, so a grant, revoke or disable applies on the next
 * request. Parameters are written `+?`: SQLite builds with STAT4 (Bun's does) re-plan a join
 * every time a parameter the planner could use is re-bound, which made this statement cost
 * ~20 µs instead of ~2 µs; the unary plus hides the value from the planner and keeps the indexes.
 */
export const isSuperSql = (userRef: string) => `EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
          WHERE ur.user_id = ${userRef} AND r.status = 'enabled' AND r.code = '${SUPER_ADMIN_ROLE}')`;
/** Session live and its user enabled; binds the session id, the user id and now. */
const LIVE_SESSION = `s.id = +? AND s.user_id = +? AND s.revoked_at IS NULL AND s.expires_at > +? AND u.status = 'enabled'`;
/** The auth statement; binds the code (NULL: none needed), the session id, the user id and now. */
export const AUTH_SQL = `SELECT u.login_name AS login_name,
  ${isSuperSql('u.id')} AS is_super,
  ${holdsCodeSql('u.id')} AS has_perm
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE ${LIVE_SESSION}`;

/**
 * The session a signed link names is live (as LIVE_SESSION, the link carrying no user id): it
 * exists, is not revoked or expired, and its user is enabled. Binds the session id and now; a
 * condition for the link's file read (modules/files), so the check rides in that statement.
 */
export const LINK_SESSION_LIVE = `EXISTS (SELECT 1 FROM sessions ls JOIN users lu ON lu.id = ls.user_id
  WHERE ls.id = +? AND ls.revoked_at IS NULL AND ls.expires_at > +? AND lu.status = 'enabled')`;

/** The session statement's 401 (ended, revoked, expired, or its user disabled or deleted). */
export const SESSION_ENDED = 'Session has ended, please log in again';

interface AuthRow {
  login_name: string;
  is_super: number;
  has_perm: number;
}

/**
 * The caller's check for one request (db/runner.ts): `code` is the route's permission code (null:
 * any logged-in user); `userId`/`sessionId` come from the verified token; `now` is the request's time.
 */
export function callerCheck(code: PermissionCode | null, userId: number, sessionId: string, now: () => number): CallerCheck {
  return {
    userId,
    sessionId,
    statement: { sql: AUTH_SQL, parameters: [code, sessionId, userId, new Date(now()).toISOString()] },
    judge(found) {
      const row = found as AuthRow | undefined;
      if (!row) return { refusal: new AppError('UNAUTHORIZED', SESSION_ENDED) };
      const caller: Caller = { userId, sessionId, loginName: row.login_name, isSuperAdmin: row.is_super === 1 };
      const permitted = code === null || caller.isSuperAdmin || row.has_perm === 1;
      return permitted ? { caller } : { caller, refusal: forbidden() };
    },
    // "now" is taken when the batch is built: the guards judge the state it runs on.
    guards: (caller) => writeGuards(code, caller, new Date(now()).toISOString()),
    openGuards: () => openGuards(code, userId, sessionId, new Date(now()).toISOString()),
  };
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
