import type { Context, MiddlewareHandler } from 'hono';
import { errors as joseErrors, jwtVerify } from 'jose';
import { callerCheck } from '../access/auth-statement.ts';
import { KEY_INVALID, keyCallerCheck, type KeySeen } from '../access/api-key-statement.ts';
import { hashKeyRandom, KEY_PREFIX, parseKeySecret } from '../core/api-key-secret.ts';
import { AppError, tooMany } from '../core/errors.ts';
import { errorFields } from '../core/log.ts';
import { qb } from '../db/compile.ts';
import { hitQuery, type WindowRule } from '../db/rate-limits.ts';
import { isoNow } from '../core/time.ts';
import { afterResponse } from './after-response.ts';
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

/** The bearer credential of the request: a login token or an API key (`ea_…`). */
function bearerOf(c: Context): string {
  const header = c.req.header('authorization');
  if (!header) throw new AppError('UNAUTHORIZED', 'Not logged in');
  const token = header.match(BEARER)?.[1];
  if (!token) throw new AppError('UNAUTHORIZED', 'Malformed Authorization header');
  return token;
}

/** Whether the request carries an API key rather than a login token (app.ts: /auth/* refuses keys). */
export const carriesApiKey = (c: Context) => /^Bearer\s+ea_/i.test(c.req.header('authorization') ?? '');

/** Claims of a verified token; everything else about the caller comes from the session row. */
export async function verifyToken(c: Context, given?: string): Promise<VerifiedToken> {
  const deps = c.get('deps');
  const token = given ?? bearerOf(c);
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
 * Verifies the bearer credential and hands the request's runner the caller's check for `code`
 * (null: any logged-in user). Returns what to do once the request is answered (an API key's last
 * use), if anything.
 */
async function attachCaller(c: Context, code: PermissionCode | null, replicaReads: boolean, mfaEnrolment = false): Promise<(() => Promise<void>) | undefined> {
  const token = bearerOf(c);
  if (token.startsWith(KEY_PREFIX)) return attachKey(c, code, token, replicaReads);
  const { userId, sessionId } = await verifyToken(c, token);
  const deps = c.get('deps');
  c.get('run').authenticate(callerCheck(code, userId, sessionId, deps.clock.now, deps, mfaEnrolment), replicaReads);
  return undefined;
}

/** A presented key whose hash matched its row once: the owner (a key's owner never changes, ids are never reused). */
interface KnownKey {
  keyId: number;
  hash: string;
  ownerId: number;
}
const KEYS_KNOWN = Symbol('api keys known');
const KEYS_MAX = 10_000;
const keysKnown = (owner: object) => perApp(owner, KEYS_KNOWN, () => new Map<string, KnownKey>());
/** Requests per key in the current minute (per process / isolate). */
const KEY_WINDOWS = Symbol('api key windows');
const keyWindows = (owner: object) => perApp(owner, KEY_WINDOWS, () => new Map<number, { start: number; n: number }>());

/**
 * An API key (docs/api-keys.md). The owner's id must be known before the handler builds its plan
 * (plans state the caller's scope with it), so a key seen for the first time in this process is
 * looked up alone (id and hash: one extra read, once per key and process); afterwards the key's
 * whole check travels at the head of the request's first plan, as a token's does. Then the per-key
 * rate limit (only for a secret that matched: a wrong secret cannot spend a real key's budget).
 */
async function attachKey(c: Context, code: PermissionCode | null, token: string, replicaReads: boolean): Promise<() => Promise<void>> {
  const deps = c.get('deps');
  const run = c.get('run');
  const known = keysKnown(deps.keys);
  let key = known.get(token);
  if (!key) {
    const parsed = parseKeySecret(token);
    if (!parsed) throw new AppError('UNAUTHORIZED', KEY_INVALID);
    key = await lookUpKey(c, parsed.id, await hashKeyRandom(parsed.random));
    if (known.size >= KEYS_MAX) known.delete(known.keys().next().value!);
    known.set(token, key);
  }
  rateLimit(c, key.keyId);
  let seen: KeySeen | undefined;
  const { keyId } = key;
  run.authenticate(
    keyCallerCheck({
      code,
      keyId,
      ownerId: key.ownerId,
      secretHash: key.hash,
      clientIp: () => c.get('client').ip,
      now: deps.clock.now,
      owner: deps,
      seen: (s) => (seen = s),
    }),
    replicaReads,
  );
  return async () => {
    if (!seen) return;
    const now = deps.clock.now();
    const every = deps.config.API_KEY_LAST_USED_SECONDS * 1000;
    if (seen.lastUsedAt !== null && Date.parse(seen.lastUsedAt) > now - every) return;
    // Sampled: at most one write per key per API_KEY_LAST_USED_SECONDS, decided by the stored time
    // (so across processes too), outside the request's plan and after the response where the
    // runtime allows (Workers: waitUntil).
    const at = new Date(now).toISOString();
    const touch = qb
      .updateTable('api_keys')
      .set({ last_used_at: at, last_used_ip: c.get('client').ip })
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', new Date(now - every).toISOString())]))
      .compile();
    const work = run
      .detached()
      .record([touch])
      .then(
        () => undefined,
        (err: unknown) => deps.log.log('error', 'api key last-use write failed', { traceId: c.get('traceId'), ...errorFields(err) }),
      );
    await afterResponse(c, work);
  };
}

/**
 * Wrong API-key secrets, per client address (the login throttle's address rule, a counter of its
 * own): 30 within 10 minutes lock the address for 10 minutes, 429 + Retry-After. Only a secret this
 * process has not yet seen match is judged by it, so the happy path (a key already verified here)
 * reads and writes nothing for it; an attacker at another address cannot lock a key's owner out (a
 * per-key-id counter would let anyone lock any key).
 */
export const KEY_GUESS_RULE: WindowRule = { limit: 30, windowMs: 10 * 60_000, lockMs: 10 * 60_000 };
const guessKey = (ip: string) => `api-key-ip:${ip}`;
/** Addresses this process knows to be locked (address → lock end, ms): refused with no database access. */
const KEY_LOCKS = Symbol('api key address locks');
const keyLocks = (owner: object) => perApp(owner, KEY_LOCKS, () => new Map<string, number>());
const TOO_MANY_GUESSES = 'Too many invalid API keys from this address, try again later';

/**
 * A key not yet verified in this process: its owner, if the secret matches, and the address's lock,
 * in one statement (one round trip). A locked address is refused before the secret is judged (429
 * whether it is right or wrong: no oracle); a wrong secret counts one failure for the address (a
 * write only on that path).
 */
async function lookUpKey(c: Context, keyId: number, hash: string): Promise<KnownKey> {
  const deps = c.get('deps');
  const run = c.get('run');
  const ip = c.get('client').ip;
  const locks = keyLocks(deps.keys);
  const now = deps.clock.now();
  const lockedUntil = locks.get(ip);
  if (lockedUntil !== undefined) {
    if (lockedUntil > now) throw tooMany((lockedUntil - now) / 1000, TOO_MANY_GUESSES);
    locks.delete(ip);
  }
  const row = await run.first<{ user_id: number | null; until: string | null }>(
    qb
      .selectNoFrom((eb) => [
        eb.selectFrom('api_keys').select('user_id').where('id', '=', keyId).where('secret_hash', '=', hash).as('user_id'),
        eb.selectFrom('rate_limits').select('locked_until').where('key', '=', guessKey(ip)).where('locked_until', '>', isoNow(deps.clock)).as('until'),
      ])
      .compile(),
  );
  /** Remembers a lock the database reports; its end (ms), or undefined when none holds now. */
  const remember = (until: string | null | undefined) => {
    const end = until ? Date.parse(until) : NaN;
    if (!(end > now)) return undefined;
    if (locks.size >= KEYS_MAX) locks.clear();
    locks.set(ip, end);
    return end;
  };
  const end = remember(row?.until);
  if (end !== undefined) throw tooMany((end - now) / 1000, TOO_MANY_GUESSES);
  if (row?.user_id == null) {
    // The attempt that reaches the limit is answered 401 like the others; the next one is 429.
    const [counted] = await run.record([hitQuery(deps.clock, guessKey(ip), KEY_GUESS_RULE).compile()]);
    remember((counted?.rows[0] as { locked_until: string | null } | undefined)?.locked_until);
    throw new AppError('UNAUTHORIZED', KEY_INVALID);
  }
  return { keyId, hash, ownerId: row.user_id };
}

/** Fixed one-minute windows per key (API_KEY_PER_MINUTE, 0: off): 429 with Retry-After beyond. */
function rateLimit(c: Context, keyId: number): void {
  const deps = c.get('deps');
  const limit = deps.config.API_KEY_PER_MINUTE;
  if (limit === 0) return;
  const now = deps.clock.now();
  const windows = keyWindows(deps.keys);
  let w = windows.get(keyId);
  if (!w || now - w.start >= 60_000) {
    if (!w && windows.size >= KEYS_MAX) windows.clear();
    w = { start: now, n: 0 };
    windows.set(keyId, w);
  }
  if (++w.n > limit) throw tooMany((w.start + 60_000 - now) / 1000, 'Too many requests with this API key, try again later');
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
    const after = await attachCaller(c, code, replicaReads, mfaEnrolment);
    await next();
    await verdictLast(c);
    if (after) await after();
  };
}

/**
 * Writes, the half before the op-log recorder: verifies the token and attaches the caller's check.
 * The handler's first read or write judges the caller (a write plan is always judged first, and
 * its batch is headed by the caller's check as guards, db/runner.ts).
 */
export function authenticateWrite(code: PermissionCode | null, mfaEnrolment = false): MiddlewareHandler {
  return async (c, next) => {
    const after = await attachCaller(c, code, false, mfaEnrolment);
    await next();
    if (after) await after();
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
