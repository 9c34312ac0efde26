import { sql } from 'kysely';
import type { Deps } from '../../deps';
import { AppError, badRequest, forbidden, tooMany, unauthorized } from '../../core/errors';
import type { PasswordHasher } from '../../core/ports';
import { dummyPhc } from '../../core/phc';
import { isoNow } from '../../core/time';
import { consumeCaptcha } from './captcha.service';
import { hit, lockedFor, releaseQuery } from './rate-limit';
import { signSessionToken } from './session';
import type { LoginInput } from './auth.schemas';

export interface LoginClient {
  ip: string;
  userAgent: string;
  browser: string;
  os: string;
  country: string | null;
  city: string | null;
  traceId: string;
}

const TEN_MINUTES = 10 * 60_000;
/** Per login name + address: 5 failures lock that pair for 10 minutes. */
export const NAME_RULE = { limit: 5, windowMs: TEN_MINUTES, lockMs: TEN_MINUTES };
/** Per address: 30 failures within 10 minutes lock the address for 10 minutes. */
export const ADDRESS_RULE = { limit: 30, windowMs: TEN_MINUTES, lockMs: TEN_MINUTES };

export const BAD_CREDENTIALS = 'Invalid login name or password';

const OWASP_DUMMY = dummyPhc({ memoryCost: 19456, timeCost: 2, parallelism: 1 });

/**
 * What an unknown user's password is verified against, so both paths cost the same: a constant
 * PHC string with the hasher's parameters (never a hash computed at start-up, which made every
 * new Workers isolate pay one argon2 run on its first request, whatever it was).
 */
export function dummyHash(hasher: PasswordHasher): string {
  return hasher.dummy ?? OWASP_DUMMY;
}

/** The login-log row of one attempt, compiled so it can join an atomic batch. */
export function loginLogRow(
  deps: Deps,
  client: LoginClient,
  loginName: string,
  status: 'success' | 'failure',
  msg: string,
  userId: number | null,
) {
  return deps.db
    .insertInto('login_log')
    .values({
      login_name: loginName.slice(0, 64),
      user_id: userId,
      status,
      msg: msg.slice(0, 300),
      ip: client.ip,
      user_agent: client.userAgent,
      browser: client.browser,
      os: client.os,
      country: client.country,
      city: client.city,
      trace_id: client.traceId,
      created_at: isoNow(deps.clock),
    })
    .compile();
}

export async function login(deps: Deps, input: LoginInput, client: LoginClient) {
  const { db, clock, config } = deps;
  const loginName = input.loginName.slice(0, 64);
  const nameKey = `login:${loginName.toLowerCase()}|${client.ip}`;
  const addressKey = `login-ip:${client.ip}`;
  const logRow = (status: 'success' | 'failure', msg: string, userId: number | null) =>
    loginLogRow(deps, client, loginName, status, msg, userId);
  const refuse = async (err: AppError, userId: number | null = null): Promise<never> => {
    await db.executeQuery(logRow('failure', err.message, userId));
    throw err;
  };

  // The captcha is used up by this attempt whatever happens next.
  const captchaOk = config.CAPTCHA_ENABLED ? await consumeCaptcha(deps, input.codeKey, input.securityCode) : true;
  const lockMs = await lockedFor(deps, [nameKey, addressKey]);
  if (lockMs > 0) return refuse(tooMany(lockMs / 1000, 'Too many failed login attempts, try again later'));
  if (!captchaOk) return refuse(badRequest('securityCode: the verification code is wrong or has expired'));

  // The attempt is counted before the slow hash, so a burst of parallel guesses is refused as it
  // arrives instead of all passing the lock check above; a success takes its count back.
  const byName = await hit(deps, nameKey, NAME_RULE);
  const byAddress = await hit(deps, addressKey, ADDRESS_RULE);
  if (byName.count > NAME_RULE.limit || byAddress.count > ADDRESS_RULE.limit) {
    const until = Math.max(Date.parse(byName.lockedUntil ?? '') || 0, Date.parse(byAddress.lockedUntil ?? '') || 0);
    return refuse(tooMany(Math.max(1, (until - clock.now()) / 1000), 'Too many failed login attempts, try again later'));
  }

  const user = await db
    .selectFrom('users')
    .select(['id', 'login_name', 'password_hash', 'status'])
    .where(sql<boolean>`login_name = ${loginName} COLLATE NOCASE`)
    .executeTakeFirst();
  const passwordOk = await deps.hasher.verify(user?.password_hash ?? dummyHash(deps.hasher), input.password);
  if (!user || !passwordOk) return refuse(unauthorized(BAD_CREDENTIALS));
  // The right password is no guess: a disabled account gives its count back, then is refused.
  const release = [db.deleteFrom('rate_limits').where('key', '=', nameKey).compile(), releaseQuery(deps, addressKey, ADDRESS_RULE)];
  if (user.status !== 'enabled') {
    await deps.atomic(release);
    return refuse(forbidden('This account is disabled'), user.id);
  }

  const sessionId = deps.ids.uuid();
  const { token, exp } = await signSessionToken(deps, user.id, sessionId);
  const now = isoNow(clock);
  const expiresAt = new Date(exp * 1000).toISOString();
  await deps.atomic([
    db
      .insertInto('sessions')
      .values({
        id: sessionId,
        user_id: user.id,
        ip: client.ip,
        user_agent: client.userAgent,
        browser: client.browser,
        os: client.os,
        login_at: now,
        expires_at: expiresAt,
        revoked_at: null,
      })
      .compile(),
    db.updateTable('users').set({ last_login_at: now, last_login_ip: client.ip }).where('id', '=', user.id).compile(),
    ...release,
    logRow('success', 'Login succeeded', user.id),
  ]);
  return { token, tokenType: 'Bearer' as const, expiresIn: config.TOKEN_TTL_SECONDS, expiresAt };
}

/** Revokes the caller's own session; the token stops working on the next request. */
export async function logout(deps: Deps, sessionId: string) {
  await deps.db
    .updateTable('sessions')
    .set({ revoked_at: isoNow(deps.clock) })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}
