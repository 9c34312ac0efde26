import type { Context, MiddlewareHandler } from 'hono';
import { errors as joseErrors, jwtVerify } from 'jose';
import { callerCheck } from '../access/auth-statement.ts';
import { AppError } from '../core/errors.ts';
import { perApp } from '../core/per-app.ts';
import type { PermissionCode } from '../core/permissions.ts';
import { verifyLink, type LinkAction } from '../core/signed-links.ts';

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
const VERIFIED = Symbol('verified tokens');
const verifiedCache = (owner: object) => perApp(owner, VERIFIED, () => new Map<string, VerifiedToken>());

/** Claims of a verified token; everything else about the caller comes from the session row. */
export async function verifyToken(c: Context): Promise<VerifiedToken> {
  const deps = c.get('deps');
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

/** Verifies the bearer token and hands the request's runner the caller's check for `code` (null: any logged-in user). */
async function attachCaller(c: Context, code: PermissionCode | null, replicaReads: boolean, mfaEnrolment = false): Promise<void> {
  const { userId, sessionId } = await verifyToken(c);
  const deps = c.get('deps');
  c.get('run').authenticate(callerCheck(code, userId, sessionId, deps.clock.now, deps, mfaEnrolment), replicaReads);
}

/**
 * Whatever the handler answered (a success, a 400 before its first read, a 404), the caller gets
 * the verdict the auth row gives, as if it had been read first: read it now if nothing carried it.
 */
async function verdictLast(c: Context): Promise<void> {
  try {
    await c.get('run').caller(); // at once when a plan already carried the auth row

  } catch (err) {
    if (c.error !== err) throw err;
  }
}

/**
 * Plain reads: the caller's auth statement travels at the head of the handler's first read plan
 * (db/runner.ts: one D1 round trip for auth and data), and its verdict outranks the handler's
 * answer. With `replicaReads` and read replication on, the auth row is read on the primary first
 * and the plan's reads go to the replica (docs/performance.md, "Read replicas").
 */
export function authenticate(code: PermissionCode | null, replicaReads = false, mfaEnrolment = false): MiddlewareHandler {
  return async (c, next) => {
    await attachCaller(c, code, replicaReads, mfaEnrolment);
    await next();
    await verdictLast(c);
  };
}

/**
 * Writes, the half before the op-log recorder: verifies the token and attaches the caller's check.
 * The handler's first read or write judges the caller (a write plan is always judged first, and
 * its batch is headed by the caller's check as guards, db/runner.ts).
 */
export function authenticateWrite(code: PermissionCode | null, mfaEnrolment = false): MiddlewareHandler {
  return async (c, next) => {
    await attachCaller(c, code, false, mfaEnrolment);
    await next();
  };
}

/**
 * Writes, the half after the op-log recorder: the verdict outranks whatever the handler answered,
 * and the recorder sees the answer the client gets (401: no row, the caller was never accepted).
 */
export const verdictLastWrite: MiddlewareHandler = async (c, next) => {
  await next();
  await verdictLast(c);
};

/**
 * For download/preview: a request carrying `exp`/`s`/`sig` is let through on a valid signed link for
 * this action and `id` (no header needed, for `<img src>` and `<a download>`); a bad or expired
 * link is 401. The session the link names is handed to the route (`linkSession`), whose file read
 * checks, in the same statement, that the session is still live (401 otherwise): no round trip of
 * its own. Without them it falls back to the bearer token and the route's code (a plain read: the
 * auth statement travels with the record's read).
 */
export function signedOr(code: PermissionCode, action: LinkAction): MiddlewareHandler {
  const bearer = authenticate(code);
  return async (c, next) => {
    const { id = '', exp, s: session = '', sig } = c.req.query();
    if (exp === undefined && sig === undefined) return bearer(c, next);
    const deps = c.get('deps');
    const wellFormed = /^[1-9][0-9]{0,15}$/.test(id) && /^[0-9]{1,15}$/.test(exp ?? '') && typeof sig === 'string';
    const verdict = wellFormed
      ? await verifyLink(await deps.keys.links(), action, Number(id), session, Number(exp), sig, Math.floor(deps.clock.now() / 1000))
      : 'invalid';
    if (verdict === 'expired') throw new AppError('UNAUTHORIZED', 'This link has expired');
    if (verdict !== 'ok') throw new AppError('UNAUTHORIZED', 'Invalid link signature');
    c.set('linkSession', session);
    await next();
  };
}
