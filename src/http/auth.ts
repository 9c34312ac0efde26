import type { Context, MiddlewareHandler } from 'hono';
import { errors as joseErrors, jwtVerify } from 'jose';
import { CompiledQuery } from 'kysely';
import { AppError, forbidden } from '../core/errors.ts';
import type { PermissionCode } from '../core/permissions.ts';
import { SUPER_ADMIN_ROLE } from '../core/permissions.ts';
import { verifyLink, type LinkAction } from '../core/signed-links.ts';
import { holdsCodeSql } from '../db/holds-code.ts';
import { AuthGate, gatedDeps, PendingAuthUser } from './auth-gate.ts';

/**
 * One statement answers everything a protected request needs: the session is live, its user is
 * enabled, and whether the user is a super admin or holds the route's code through an enabled
 * role and an enabled menu. Nothing is cached, so a grant, revoke or disable applies on the next
 * request. Parameters are written `+?`: SQLite builds with STAT4 (Bun's does) re-plan a join
 * every time a parameter the planner could use is re-bound, which made this statement cost
 * ~20 µs instead of ~2 µs; the unary plus hides the value from the planner and keeps the indexes.
 */
const isSuperSql = (userRef: string) => `EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
          WHERE ur.user_id = ${userRef} AND r.status = 'enabled' AND r.code = '${SUPER_ADMIN_ROLE}')`;
/** Session live and its user enabled; binds the session id, the user id and now. */
const LIVE_SESSION = `s.id = +? AND s.user_id = +? AND s.revoked_at IS NULL AND s.expires_at > +? AND u.status = 'enabled'`;
const AUTH_SQL = `SELECT u.id AS user_id, u.login_name AS login_name,
  ${isSuperSql('u.id')} AS is_super,
  ${holdsCodeSql('u.id')} AS has_perm
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE ${LIVE_SESSION}`;

/**
 * The auth statement's verdict as guard statements (migrations/0015), for the head of a write batch
 * under deferred auth (http/auth-gate.ts): the batch fails whole with 401 when the session ended or
 * the user was disabled, with 403 when the caller no longer holds `code` (null: none needed).
 */
function writeGuards(code: PermissionCode | null, sessionId: string, userId: number, now: string, wasSuper: boolean): CompiledQuery[] {
  const guards = [
    CompiledQuery.raw(
      `INSERT INTO auth_guard_failures (rule) SELECT 'session_ended' WHERE NOT EXISTS (SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id WHERE ${LIVE_SESSION})`,
      [sessionId, userId, now],
    ),
  ];
  if (code !== null) {
    guards.push(
      CompiledQuery.raw(
        `INSERT INTO auth_guard_failures (rule) SELECT 'not_permitted' WHERE NOT (${isSuperSql('+?')} OR ${holdsCodeSql('+?')})`,
        [userId, code, userId],
      ),
    );
  }
  if (wasSuper) {
    // The handler planned the write as a super admin's (the super-admin-only, scope and authority
    // checks are left out for one): the caller must still be one when it is written.
    guards.push(CompiledQuery.raw(`INSERT INTO auth_guard_failures (rule) SELECT 'not_permitted' WHERE NOT ${isSuperSql('+?')}`, [userId]));
  }
  return guards;
}

interface AuthRow {
  user_id: number;
  login_name: string;
  is_super: number;
  has_perm: number;
}

const BEARER = /^Bearer\s+([A-Za-z0-9_\-.]{10,4096})\s*$/i;

interface VerifiedToken {
  userId: number;
  sessionId: string;
  /** Expiry in epoch seconds, re-checked against the clock on every use. */
  exp: number;
}

/**
 * Signature checks cost more than the rest of a guarded request (~75 µs through Web Crypto), and
 * a token's signature, issuer and claims never change: so a verified token is remembered, keyed
 * by its exact text, with only `exp` re-checked. Revocation is unaffected: the session row is
 * read on every request. Bounded; the oldest entry goes first.
 */
const VERIFIED_MAX = 10_000;
const verified = new WeakMap<object, Map<string, VerifiedToken>>();

function verifiedCache(owner: object): Map<string, VerifiedToken> {
  let m = verified.get(owner);
  if (!m) verified.set(owner, (m = new Map()));
  return m;
}

/** Claims of a verified token; everything else about the caller comes from the session row. */
export async function verifyToken(c: Parameters<MiddlewareHandler>[0]): Promise<VerifiedToken> {
  const deps = c.var.deps;
  const header = c.req.header('authorization');
  if (!header) throw new AppError('UNAUTHORIZED', 'Not logged in');
  const token = header.match(BEARER)?.[1];
  if (!token) throw new AppError('UNAUTHORIZED', 'Malformed Authorization header');
  const nowSec = deps.clock.now() / 1000;
  const cache = verifiedCache(deps.keys);
  const hit = cache.get(token);
  if (hit) {
    if (hit.exp > nowSec) return hit;
    cache.delete(token);
    throw new AppError('UNAUTHORIZED', 'Token has expired, please log in again');
  }
  let claims: VerifiedToken;
  try {
    const { payload } = await jwtVerify(token, await deps.keys.jwt(), {
      algorithms: ['HS256'],
      issuer: deps.config.JWT_ISSUER,
      requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      currentDate: new Date(deps.clock.now()),
    });
    const userId = Number(payload.sub);
    if (!Number.isSafeInteger(userId) || userId <= 0 || typeof payload.jti !== 'string') throw new Error('bad claims');
    claims = { userId, sessionId: payload.jti, exp: payload.exp! };
  } catch (e) {
    const expired = e instanceof joseErrors.JWTExpired;
    throw new AppError('UNAUTHORIZED', expired ? 'Token has expired, please log in again' : 'Invalid token');
  }
  if (cache.size >= VERIFIED_MAX) cache.delete(cache.keys().next().value!);
  cache.set(token, claims);
  return claims;
}

/**
 * Authenticates the caller and computes whether they hold `code` (null: any logged-in user).
 * With `enforce` (plain reads), a caller without the code is refused (403), and the auth statement
 * is deferred to the handler's first read batch (http/auth-gate.ts): one D1 round trip for auth
 * and data. Routes that record an op-log row authenticate here and now and enforce later, in
 * enforcePermission, so that the refusal is recorded too.
 * With `replicaReads` (plain read routes) and read replication on (deps.afterAuth), nothing is
 * deferred: the auth statement must see the primary and the data should not, so the check runs
 * here on the primary and the rest of the request reads from the replica session (README "Read
 * replicas", trade-off with one-round-trip reads).
 */
export function authenticate(code: PermissionCode | null, enforce = false, replicaReads = false): MiddlewareHandler {
  return async (c, next) => {
    const deps = c.var.deps;
    const { userId, sessionId } = await verifyToken(c);
    const toReplica = replicaReads && deps.afterAuth !== undefined;
    if (!enforce || toReplica) {
      const now = new Date(deps.clock.now()).toISOString();
      const { row, isSuperAdmin, permitted } = judgeFor(c, code)((await deps.read<AuthRow>(AUTH_SQL, [code, sessionId, userId, now]))[0]);
      c.set('auth', { userId: row.user_id, loginName: row.login_name, sessionId, isSuperAdmin });
      if (enforce && !permitted) throw forbidden();
      if (toReplica) c.set('deps', deps.afterAuth!());
      await next();
      return;
    }
    const gate = openGate(c, code, userId, sessionId, false);
    c.set('deps', gatedDeps(deps, gate));
    await next();
    await verdictLast(c, gate);
  };
}

/** The auth row's verdict: the caller (or 401), and whether they hold the code. */
function judgeFor(c: Context, code: PermissionCode | null) {
  return (found: unknown) => {
    const row = found as AuthRow | undefined;
    if (!row) throw new AppError('UNAUTHORIZED', 'Session has ended, please log in again');
    const isSuperAdmin = row.is_super === 1;
    const permitted = code === null || isSuperAdmin || row.has_perm === 1;
    c.set('permitted', permitted);
    return { row, isSuperAdmin, permitted };
  };
}

/** The caller as PendingAuthUser behind a new AuthGate (with the write guards when `writes`). */
function openGate(c: Context, code: PermissionCode | null, userId: number, sessionId: string, writes: boolean): AuthGate {
  const deps = c.var.deps;
  const now = new Date(deps.clock.now()).toISOString();
  const judge = judgeFor(c, code);
  const auth = new PendingAuthUser(userId, sessionId);
  const gate = new AuthGate(
    deps,
    { sql: AUTH_SQL, parameters: [code, sessionId, userId, now] },
    (found) => {
      const { row, isSuperAdmin, permitted } = judge(found);
      // Known before a 403, so the op-log row of the refusal names the caller.
      auth.learn(row.login_name, isSuperAdmin);
      if (!permitted) throw forbidden();
    },
    // The guards check the state when the write runs: "now" is taken then.
    writes ? () => writeGuards(code, sessionId, userId, new Date(deps.clock.now()).toISOString(), !auth.pending && auth.isSuperAdmin) : undefined,
  );
  auth.attach(gate);
  c.set('auth', auth);
  return gate;
}

/**
 * Whatever the handler did (no database call, a 400 before its first read, a success), the caller
 * gets the verdict the auth row gives, as if it had been read first.
 */
async function verdictLast(c: Context, gate: AuthGate): Promise<void> {
  try {
    await gate.settle();
  } catch (err) {
    if (c.error !== err) throw err;
  }
}

/**
 * Deferred auth for writes (GuardOptions.deferAuth), the half before the op-log recorder: verifies
 * the token and opens the gate; the auth statement itself goes out with the handler's first
 * database call (its pre-read, or its write batch), see gateWrites.
 */
export function authenticateWrite(code: PermissionCode | null): MiddlewareHandler {
  return async (c, next) => {
    const { userId, sessionId } = await verifyToken(c);
    openGate(c, code, userId, sessionId, true);
    await next();
  };
}

/**
 * Deferred auth for writes, the half after the op-log recorder (which keeps the plain deps for its
 * row): the handler gets deps behind the gate, where every write batch is headed by the caller's
 * check as guard statements (http/auth-gate.ts), and the verdict is the answer whatever the handler
 * did (401: the recorder writes no row, as when the token is refused up front).
 */
export const gateWrites: MiddlewareHandler = async (c, next) => {
  const gate = (c.get('auth') as PendingAuthUser).authGate!;
  c.set('deps', gatedDeps(c.var.deps, gate, true));
  await next();
  await verdictLast(c, gate);
};

/** Refuses with 403 unless authenticate() found the route's code; runs after the op-log recorder. */
export const enforcePermission: MiddlewareHandler = async (c, next) => {
  if (!c.get('permitted')) throw forbidden();
  await next();
};

/**
 * For download/preview: a request carrying `exp`/`sig` is let through on a valid signed link for
 * this action and `id` (no header needed, for `<img src>` and `<a download>`); a bad or expired
 * link is 401. Without them it falls back to the bearer token and the route's code.
 */
export function signedOr(code: PermissionCode, action: LinkAction): MiddlewareHandler {
  // The bearer path is a plain read: its auth statement is deferred into the record's read (one
  // round trip on D1), and the gate refuses a caller without the code (403) before any row is used.
  const bearer = authenticate(code, true);
  return async (c, next) => {
    const { id = '', exp, sig } = c.req.query();
    if (exp === undefined && sig === undefined) {
      return bearer(c, async () => {
        c.set('permitted', true); // decided by the gate's verdict (authenticate with enforce)
        await next();
      });
    }
    const deps = c.var.deps;
    const wellFormed = /^[1-9][0-9]{0,15}$/.test(id) && /^[0-9]{1,15}$/.test(exp ?? '') && typeof sig === 'string';
    const verdict = wellFormed
      ? await verifyLink(await deps.keys.links(), action, Number(id), Number(exp), sig, Math.floor(deps.clock.now() / 1000))
      : 'invalid';
    if (verdict === 'expired') throw new AppError('UNAUTHORIZED', 'This link has expired');
    if (verdict !== 'ok') throw new AppError('UNAUTHORIZED', 'Invalid link signature');
    c.set('permitted', true);
    await next();
  };
}
