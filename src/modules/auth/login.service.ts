import { sql, type CompiledQuery } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { AppError, badRequest, forbidden, tooMany, unauthorized } from '../../core/errors.ts';
import type { Clock, PasswordHasher } from '../../core/ports.ts';
import { dummyPhc } from '../../core/phc.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { captchaMatches, captchaOn, captchaStateQuery, consumeCaptchaQuery } from './captcha.service.ts';
import { hitQuery, lockedForQuery, lockedMs, releaseQuery, reserved, reserveQuery, type Subject } from './rate-limit.ts';
import { signSessionToken } from './session.ts';
import { base64url } from 'jose';
import { challengeId, expiresAt, factorColumns, methodsOf, randomToken } from '../mfa/index.ts';
import type { LoginInput } from './auth.schemas.ts';

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
/** Per login name, counted across every address: 5 failures lock the name for 10 minutes. */
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

/**
 * The user a login attempt concerns ("What scope filters": a failed login for an existing login
 * name carries its userId, so the admins whose scope holds that user see the attack on them):
 * the id when known, else looked up by the name in the insert itself (NULL for an unknown name).
 */
const userOfName = (loginName: string, userId: number | null) =>
  userId ?? sql<number | null>`(SELECT ul.id FROM users ul WHERE ul.login_name = ${loginName} COLLATE NOCASE)`;

/** The columns of a login-log row other than its outcome (status, msg). */
export function loginLogFacts(clock: Clock, client: LoginClient, loginName: string, userId: number | null) {
  return {
    login_name: loginName.slice(0, 64),
    user_id: userId,
    ip: client.ip,
    user_agent: client.userAgent,
    browser: client.browser,
    os: client.os,
    country: client.country,
    city: client.city,
    trace_id: client.traceId,
    created_at: isoNow(clock),
  };
}

/** The login-log row of one attempt, compiled so it can join an atomic batch. */
export function loginLogRow(
  clock: Clock,
  client: LoginClient,
  loginName: string,
  status: 'success' | 'failure',
  msg: string,
  userId: number | null,
) {
  const facts = loginLogFacts(clock, client, loginName, userId);
  return qb
    .insertInto('login_log')
    .values({ ...facts, user_id: userOfName(facts.login_name, userId), status, msg: msg.slice(0, 300) })
    .compile();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOO_MANY = 'Too many failed login attempts, try again later';
const WRONG_CODE = 'securityCode: the verification code is wrong or has expired';
/** How long an attempt waits for a throttle slot held by attempts still in flight. */
const SLOT_WAIT_MS = 15_000;
const SLOT_POLL_MS = 20;

export async function login(deps: Ports, run: Runner, input: LoginInput, client: LoginClient) {
  const { config, clock } = deps;
  const loginName = input.loginName.slice(0, 64);
  // Per name across every address (a botnet gets 5 guesses per name, not 5 per address), and per address.
  const subjects: Subject[] = [
    { key: `login-name:${loginName.toLowerCase()}`, rule: NAME_RULE },
    { key: `login-ip:${client.ip}`, rule: ADDRESS_RULE },
  ];
  const [byName, byAddress] = subjects as [Subject, Subject];
  const logRow = (status: 'success' | 'failure', msg: string, userId: number | null) =>
    loginLogRow(clock, client, loginName, status, msg, userId);
  const refuse = async (err: AppError, userId: number | null = null, more: CompiledQuery[] = []): Promise<never> => {
    await run.record([...more, logRow('failure', err.message, userId)]);
    throw err;
  };

  // Whether the captcha is on is read by the first batch (the parameter sys.account.captchaEnabled
  // wins over CAPTCHA_ENABLED, at run time): the fields are judged once it said so, and ignored
  // when it is off, whatever they hold.
  const codeKey = input.codeKey?.trim() ?? '';
  const answer = input.securityCode?.trim() ?? '';
  const malformed =
    codeKey && !UUID.test(codeKey) ? 'codeKey: must be a UUID' : answer.length > 16 ? 'securityCode: must be at most 16 characters' : undefined;
  // ONE batch before the hash (one D1 round trip): whether the captcha is on, the captcha used up
  // (by this attempt, whatever happens next, a locked-out attempt included), a throttle slot
  // reserved on every subject (none while a subject is locked or full: a parallel burst cannot get
  // more outcomes than the limit), the locks, and the user. Every outcome below releases the slot
  // in the same batch that records what happened: the second round trip.
  const attemptId = deps.ids.uuid();
  const release = releaseQuery(subjects, attemptId);
  const f = factorColumns('users.id');
  const userQuery = qb
    .selectFrom('users')
    .select(['id', 'login_name', 'password_hash', 'status', 'mfa_enabled'])
    .select([f.hasTotp.as('has_totp'), f.hasPasskey.as('has_passkey'), f.recoveryLeft.as('recovery_left')])
    .where(sql<boolean>`login_name = ${loginName} COLLATE NOCASE`)
    .compile();
  let state: CompiledQuery | undefined = captchaStateQuery(deps);
  let captcha: CompiledQuery | undefined = !malformed && codeKey && answer ? consumeCaptchaQuery(codeKey) : undefined;
  let captchaRefused: string | undefined;
  let user: LoginUserRow | undefined;
  for (let waited = 0; ; waited += SLOT_POLL_MS) {
    const results = await run.write(
      resultsOf([
        ...(state ? [state] : []),
        ...(captcha ? [captcha] : []),
        reserveQuery(clock, subjects, attemptId),
        lockedForQuery(clock, subjects.map((x) => x.key)),
        userQuery,
      ]),
    );
    if (state) {
      const on = captchaOn(results.shift());
      const removed = captcha ? results.shift()?.rows[0] : undefined;
      if (on) captchaRefused = malformed ?? ((await captchaMatches(deps, removed, codeKey, answer)) ? undefined : WRONG_CODE);
    }
    state = captcha = undefined;
    const [slot, locks, users] = results;
    const held = reserved(slot, subjects);
    const lockMs = lockedMs(clock, locks?.rows);
    if (lockMs > 0) return refuse(tooMany(lockMs / 1000, TOO_MANY), null, held ? [release] : []);
    if (captchaRefused) return refuse(badRequest(captchaRefused), null, held ? [release] : []);
    if (held) {
      user = users?.rows[0] as typeof user;
      break;
    }
    // Kept out only by attempts still in flight: wait for their outcome, which may well be a right
    // password (a shared account, an office behind one NAT) that counts nothing.
    if (waited >= SLOT_WAIT_MS) return refuse(tooMany(1, TOO_MANY));
    await new Promise((ok) => setTimeout(ok, SLOT_POLL_MS));
  }
  try {
    const passwordOk = await deps.hasher.verify(user?.password_hash ?? dummyHash(deps.hasher), input.password);
    if (!user || !passwordOk) {
      const counts = [hitQuery(clock, byName.key, byName.rule).compile(), hitQuery(clock, byAddress.key, byAddress.rule).compile()];
      return await refuse(unauthorized(BAD_CREDENTIALS), user?.id ?? null, [release, ...counts]);
    }
    // The right password is no guess: a disabled account counts no failure, and is refused.
    if (user.status !== 'enabled') return await refuse(forbidden(DISABLED), user.id, [release]);
    // A second factor: no session yet, a challenge (the name's failures are NOT cleared: the
    // password alone does not reset the count its codes share).
    if (user.mfa_enabled === 1) return await openChallenge(deps, run, client, loginName, user, release);
    return await openSession(deps, run, client, loginName, user, release, byName.key);
  } catch (err) {
    // Whatever went wrong, the slot is not held for PENDING_MS (an unlogged AppError cannot get here).
    await run.record([release]).catch(() => undefined);
    throw err;
  }
}

export const DISABLED = 'This account is disabled';

interface LoginUserRow {
  id: number;
  login_name: string;
  password_hash: string;
  status: string;
  mfa_enabled: number;
  has_totp: number;
  has_passkey: number;
  recovery_left: number;
}

/** The login-log message of a password accepted for an account with a second factor. */
export const PASSWORD_ACCEPTED = 'Password accepted; second factor required';

/**
 * The password step of an account with a second factor: a single-use challenge (5 minutes) instead
 * of a session, stored by its keyed hash with the password hash it checked (a reset, disable or
 * delete in between ends it). The token names the typed login name after a dot, so the verify step
 * counts its failures under the same per-name key as passwords before it has read anything (the
 * row is found only by the hash of the whole token: the name cannot be changed).
 */
async function openChallenge(deps: Ports, run: Runner, client: LoginClient, loginName: string, user: LoginUserRow, release: CompiledQuery) {
  const { clock } = deps;
  const token = `${randomToken()}.${base64url.encode(loginName.toLowerCase())}`;
  const current = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND password_hash = ${user.password_hash} AND status = 'enabled')`;
  const stillHash = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND password_hash = ${user.password_hash})`;
  const facts = Object.entries(loginLogFacts(clock, client, loginName, user.id));
  const [logged] = await run.write(resultsOf([
    qb
      .insertInto('login_log')
      .columns([...facts.map(([k]) => k as 'ip'), 'status', 'msg'])
      .expression(
        qb.selectNoFrom((eb) => [
          ...facts.map(([k, v]) => eb.val(v).as(k)),
          sql<string>`CASE WHEN ${current} THEN 'success' ELSE 'failure' END`.as('status'),
          sql<string>`CASE WHEN ${current} THEN ${PASSWORD_ACCEPTED} WHEN ${stillHash} THEN ${DISABLED} ELSE ${BAD_CREDENTIALS} END`.as('msg'),
        ]),
      )
      .returning(['status', 'msg'])
      .compile(),
    sql`INSERT INTO mfa_challenges (id, kind, user_id, session_id, login_name, password_hash, webauthn_challenge, expires_at, created_at)
      SELECT ${await challengeId(deps, 'login', token)}, 'login', ${user.id}, NULL, ${loginName}, ${user.password_hash}, NULL, ${expiresAt(clock)}, ${isoNow(clock)}
      WHERE ${current}`.compile(qb),
    // The user's own expired challenges go here (a few rows per user, on the user's index), so the
    // table needs no sweep of its own.
    sql`DELETE FROM mfa_challenges WHERE user_id = ${user.id} AND expires_at <= ${isoNow(clock)}`.compile(qb),
    release,
  ]));
  const row = logged?.rows[0] as { status: string; msg: string } | undefined;
  if (row?.status !== 'success') throw row?.msg === DISABLED ? forbidden(DISABLED) : unauthorized(BAD_CREDENTIALS);
  return { mfa: true as const, challenge: token, methods: methodsOf(user), token: null };
}

/**
 * Creates the session only if the password hash and status the login checked are still the
 * user's: the login-log row, the session, last-login and the name's failure reset are one batch,
 * each conditional on the same test. A reset, disable or delete that landed during the hash
 * therefore yields no token, a failure row and 401/403 — never a dead token or a 500.
 */
async function openSession(
  deps: Ports,
  run: Runner,
  client: LoginClient,
  loginName: string,
  user: { id: number; password_hash: string },
  release: CompiledQuery,
  nameKey: string,
) {
  const { clock, config } = deps;
  const sessionId = deps.ids.uuid();
  const { token, exp } = await signSessionToken(deps, user.id, sessionId);
  const now = isoNow(clock);
  const expiresAt = new Date(exp * 1000).toISOString();
  const current = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND password_hash = ${user.password_hash} AND status = 'enabled')`;
  const stillHash = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND password_hash = ${user.password_hash})`;
  const facts = Object.entries(loginLogFacts(clock, client, loginName, user.id));
  const [logged] = await run.write(resultsOf([
    qb
      .insertInto('login_log')
      .columns([...facts.map(([k]) => k as 'ip'), 'status', 'msg'])
      .expression(
        qb.selectNoFrom((eb) => [
          ...facts.map(([k, v]) => eb.val(v).as(k)),
          sql<string>`CASE WHEN ${current} THEN 'success' ELSE 'failure' END`.as('status'),
          sql<string>`CASE WHEN ${current} THEN 'Login succeeded' WHEN ${stillHash} THEN ${DISABLED} ELSE ${BAD_CREDENTIALS} END`.as('msg'),
        ]),
      )
      .returning(['status', 'msg'])
      .compile(),
    sql`INSERT INTO sessions (id, user_id, ip, user_agent, browser, os, login_at, expires_at, revoked_at)
      SELECT ${sessionId}, ${user.id}, ${client.ip}, ${client.userAgent}, ${client.browser}, ${client.os}, ${now}, ${expiresAt}, NULL
      WHERE ${current}`.compile(qb),
    sql`UPDATE users SET last_login_at = ${now}, last_login_ip = ${client.ip} WHERE id = ${user.id} AND ${current}`.compile(qb),
    sql`DELETE FROM rate_limits WHERE key = ${nameKey} AND ${current}`.compile(qb),
    release,
  ]));
  const row = logged?.rows[0] as { status: string; msg: string } | undefined;
  if (row?.status !== 'success') {
    throw row?.msg === DISABLED ? forbidden(DISABLED) : unauthorized(BAD_CREDENTIALS);
  }
  return { token, tokenType: 'Bearer' as const, expiresIn: config.TOKEN_TTL_SECONDS, expiresAt };
}

const endSession = (deps: Ports, sessionId: string) =>
  qb.updateTable('sessions').set({ revoked_at: isoNow(deps.clock) }).where('id', '=', sessionId).where('revoked_at', 'is', null).compile();

/** Revokes the caller's own session; the token stops working on the next request. */
export async function logout(deps: Ports, run: Runner) {
  // Only the token's session: the caller's auth statement travels in this batch.
  await run.write(resultsOf([endSession(deps, run.sessionId)], { anyCaller: true }));
}

/**
 * Revokes the session with this id, for a logout that carries no token (the vben dialect: its
 * logout sends only the logout cookie its login set, docs/vben.md). A session id is as unguessable
 * as a token and only ends that one session; an unknown or ended one changes nothing.
 */
export async function logoutSession(deps: Ports, run: Runner, sessionId: string) {
  await run.write(resultsOf([endSession(deps, sessionId)]));
}
