import { base64url } from 'jose';
import { sql, type CompiledQuery } from 'kysely';
import { AppError, badRequest, forbidden, tooMany, unauthorized } from '../../core/errors.ts';
import type { Ports } from '../../core/ports.ts';
import { hashRecoveryCode } from '../../core/recovery-codes.ts';
import { openSecret } from '../../core/secret-box.ts';
import { isoNow } from '../../core/time.ts';
import { verifyTotp } from '../../core/totp.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import {
  challengeId,
  passkeyAuthenticationOptions,
  passkeysOf,
  relyingParty,
  storedPasskey,
  totpContext,
  verifyPasskeyAssertion,
  type Method,
  type PasskeyRow,
} from '../mfa/index.ts';
import type { VerifyInput } from './auth.schemas.ts';
import { ADDRESS_RULE, BAD_CREDENTIALS, DISABLED, loginLogFacts, loginLogRow, NAME_RULE, type LoginClient } from './login.service.ts';
import { hitQuery, lockedForQuery, lockedMs, releaseQuery, reserved, reserveQuery, type Subject } from './rate-limit.ts';
import { signSessionToken } from './session.ts';

/**
 * The second step of a login with a second factor (contract: "Second factor"): the challenge of
 * the password step plus a TOTP code, a recovery code or a passkey assertion → the session. Two
 * round trips, as the password step: (1) a throttle slot on the login name and the address (the
 * same counters as passwords), their locks, the challenge with what the factor needs; (2) the
 * outcome: a failure counted, or the session created only if everything checked is still so (the
 * challenge unused and unexpired, the password hash and status it was issued for, the code's step
 * not used yet, the recovery code unused, the passkey's counter unchanged).
 */

export const CHALLENGE_GONE = 'challenge: the login challenge has expired or was already used; log in again';
const WRONG_FACTOR = 'The second-factor code is wrong or has expired';
const TOO_MANY = 'Too many failed login attempts, try again later';
const SLOT_WAIT_MS = 15_000;
const SLOT_POLL_MS = 20;

/** The login name a challenge token names (after its dot), or null for a malformed token. */
function nameOfToken(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot < 16 || dot !== token.lastIndexOf('.')) return null;
  try {
    const name = new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(token.slice(dot + 1)));
    return name.length > 0 && name.length <= 64 ? name : null;
  } catch {
    return null;
  }
}

interface ChallengeRow {
  user_id: number;
  login_name: string;
  password_hash: string;
  webauthn_challenge: string | null;
  status: string;
  current_hash: string;
  totp_secret: string | null;
  totp_confirmed: string | null;
  last_step: number | null;
}

const challengeQuery = (id: string, now: string) =>
  sql`SELECT c.user_id, c.login_name, c.password_hash, c.webauthn_challenge, u.status, u.password_hash AS current_hash,
      t.secret AS totp_secret, t.confirmed_at AS totp_confirmed, t.last_step
    FROM mfa_challenges c JOIN users u ON u.id = c.user_id LEFT JOIN mfa_totp t ON t.user_id = c.user_id
    WHERE c.id = ${id} AND c.kind = 'login' AND c.expires_at > ${now}`.compile(qb);

/** The challenge's user, as SQL (for statements that need it before the row was read). */
const userOfChallenge = (id: string) => sql`(SELECT user_id FROM mfa_challenges WHERE id = ${id})`;

/** POST /auth/login/passkeyOptions: options for navigator.credentials.get() limited to the user's passkeys. */
export async function loginPasskeyOptions(deps: Ports, run: Runner, input: { challenge: string }) {
  const now = isoNow(deps.clock);
  const id = await challengeId(deps, 'login', input.challenge);
  const [challenge, passkeys] = await run.write(resultsOf([challengeQuery(id, now), passkeysOf(userOfChallenge(id))]));
  if (!challenge?.rows.length) throw unauthorized(CHALLENGE_GONE);
  const rows = passkeys!.rows as PasskeyRow[];
  if (rows.length === 0) throw badRequest('passkey: this account has no passkey; use a code');
  const options = await passkeyAuthenticationOptions(relyingParty(deps.config), rows.map(storedPasskey));
  await run.write(resultsOf([sql`UPDATE mfa_challenges SET webauthn_challenge = ${options.challenge} WHERE id = ${id}`.compile(qb)]));
  return options;
}

/** What the factor check found: the method, and the statements and condition that use it up. */
interface Accepted {
  factor: Method;
  /** Still true when the session is created (SQL). */
  unused: ReturnType<typeof sql>;
  /** Run after the session exists (its id as witness): the factor used up. */
  useUp: CompiledQuery[];
}

export async function verifyLogin(deps: Ports, run: Runner, input: VerifyInput, client: LoginClient) {
  const { clock } = deps;
  const typedName = nameOfToken(input.challenge);
  const logName = typedName ?? '';
  const refuse = async (err: AppError, userId: number | null, more: CompiledQuery[] = []): Promise<never> => {
    await run.record([...more, loginLogRow(clock, client, logName, 'failure', err.message, userId)]);
    throw err;
  };
  if (typedName === null) return refuse(unauthorized(CHALLENGE_GONE), null);
  const subjects: Subject[] = [
    { key: `login-name:${typedName}`, rule: NAME_RULE },
    { key: `login-ip:${client.ip}`, rule: ADDRESS_RULE },
  ];
  const attemptId = deps.ids.uuid();
  const release = releaseQuery(subjects, attemptId);
  const id = await challengeId(deps, 'login', input.challenge);
  const recoveryHash = input.recoveryCode !== undefined ? await hashRecoveryCode(await deps.keys.mfaRecovery(), input.recoveryCode) : null;
  const now = isoNow(clock);
  let row: ChallengeRow | undefined;
  let passkeys: PasskeyRow[] = [];
  let recovery: { used_at: string | null } | undefined;
  for (let waited = 0; ; waited += SLOT_POLL_MS) {
    const [slot, locks, found, keys, code] = await run.write(
      resultsOf([
        reserveQuery(clock, subjects, attemptId),
        lockedForQuery(clock, subjects.map((x) => x.key)),
        challengeQuery(id, now),
        ...(input.passkey ? [passkeysOf(userOfChallenge(id))] : [sql`SELECT 1 WHERE 0`.compile(qb)]),
        sql`SELECT used_at FROM mfa_recovery_codes WHERE user_id = ${userOfChallenge(id)} AND code_hash = ${recoveryHash ?? ''}`.compile(qb),
      ]),
    );
    const held = reserved(slot, subjects);
    const lockMs = lockedMs(clock, locks?.rows);
    row = found?.rows[0] as ChallengeRow | undefined;
    if (lockMs > 0) return refuse(tooMany(lockMs / 1000, TOO_MANY), row?.user_id ?? null, held ? [release] : []);
    if (held) {
      passkeys = (keys?.rows ?? []) as PasskeyRow[];
      recovery = code?.rows[0] as typeof recovery;
      break;
    }
    if (waited >= SLOT_WAIT_MS) return refuse(tooMany(1, TOO_MANY), row?.user_id ?? null);
    await new Promise((ok) => setTimeout(ok, SLOT_POLL_MS));
  }
  try {
    if (!row || row.login_name.toLowerCase() !== typedName) return await refuse(unauthorized(CHALLENGE_GONE), null, [release]);
    // A reset, disable or delete since the password step ends the challenge.
    if (row.status !== 'enabled') return await refuse(forbidden(DISABLED), row.user_id, [release]);
    if (row.current_hash !== row.password_hash) return await refuse(unauthorized(BAD_CREDENTIALS), row.user_id, [release]);
    const accepted = await checkFactor(deps, input, row, passkeys, recovery, recoveryHash);
    if (!accepted) {
      const counts = subjects.map((s) => hitQuery(clock, s.key, s.rule).compile());
      return await refuse(unauthorized(WRONG_FACTOR), row.user_id, [release, ...counts]);
    }
    return await openVerifiedSession(deps, run, client, row, id, accepted, release, subjects[0]!.key);
  } catch (err) {
    await run.record([release]).catch(() => undefined);
    throw err;
  }
}

async function checkFactor(
  deps: Ports,
  input: VerifyInput,
  row: ChallengeRow,
  passkeys: PasskeyRow[],
  recovery: { used_at: string | null } | undefined,
  recoveryHash: string | null,
): Promise<Accepted | null> {
  const userId = row.user_id;
  if (input.code !== undefined) {
    if (!row.totp_secret || !row.totp_confirmed) return null;
    const secret = await openSecret(await deps.keys.mfa(), row.totp_secret, totpContext(userId));
    if (!secret) return null;
    const step = await verifyTotp(secret, input.code, deps.clock.now(), row.last_step);
    if (step === null) return null;
    return {
      factor: 'totp',
      // No replay: the step must still be unused when the session is created (a parallel verify with the same code loses).
      unused: sql`EXISTS (SELECT 1 FROM mfa_totp WHERE user_id = ${userId} AND confirmed_at IS NOT NULL AND coalesce(last_step, -1) < ${step})`,
      useUp: [sql`UPDATE mfa_totp SET last_step = ${step} WHERE user_id = ${userId}`.compile(qb)],
    };
  }
  if (input.recoveryCode !== undefined) {
    if (!recoveryHash || !recovery || recovery.used_at !== null) return null;
    return {
      factor: 'recovery',
      unused: sql`EXISTS (SELECT 1 FROM mfa_recovery_codes WHERE user_id = ${userId} AND code_hash = ${recoveryHash} AND used_at IS NULL)`,
      useUp: [sql`UPDATE mfa_recovery_codes SET used_at = ${isoNow(deps.clock)} WHERE user_id = ${userId} AND code_hash = ${recoveryHash}`.compile(qb)],
    };
  }
  if (input.passkey !== undefined) {
    if (!row.webauthn_challenge) return null;
    const stored = passkeys.map(storedPasskey);
    const r = await verifyPasskeyAssertion(relyingParty(deps.config), input.passkey as never, row.webauthn_challenge, stored);
    if (!r.ok) return null;
    const before = passkeys.find((p) => p.credential_id === r.value.credentialId)!;
    return {
      factor: 'passkey',
      // The counter is still the one verified against (a cloned authenticator racing loses).
      unused: sql`EXISTS (SELECT 1 FROM mfa_passkeys WHERE id = ${before.id} AND counter = ${before.counter})`,
      useUp: [
        sql`UPDATE mfa_passkeys SET counter = ${r.value.newCounter}, last_used_at = ${isoNow(deps.clock)} WHERE id = ${before.id}`.compile(qb),
      ],
    };
  }
  return null;
}

/**
 * The session, created only if the challenge, the user and the factor are all as checked: the log
 * row and the session insert test that together; everything after them (last login, the name's
 * failures cleared, the factor used up, the challenge deleted) runs only if the session exists.
 */
async function openVerifiedSession(
  deps: Ports,
  run: Runner,
  client: LoginClient,
  row: ChallengeRow,
  id: string,
  accepted: Accepted,
  release: CompiledQuery,
  nameKey: string,
) {
  const { clock, config } = deps;
  const userId = row.user_id;
  const sessionId = deps.ids.uuid();
  const { token, exp } = await signSessionToken(deps, userId, sessionId);
  const now = isoNow(clock);
  const expiresAt = new Date(exp * 1000).toISOString();
  const userCurrent = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND password_hash = ${row.password_hash} AND status = 'enabled')`;
  const challengeLive = sql`EXISTS (SELECT 1 FROM mfa_challenges WHERE id = ${id} AND expires_at > ${now})`;
  const current = sql`(${userCurrent} AND ${challengeLive} AND ${accepted.unused})`;
  const stillHash = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND password_hash = ${row.password_hash})`;
  const opened = sql`EXISTS (SELECT 1 FROM sessions WHERE id = ${sessionId})`;
  const facts = Object.entries(loginLogFacts(clock, client, row.login_name, userId));
  const recoveryLeft = sql`(SELECT count(*) FROM mfa_recovery_codes WHERE user_id = ${userId} AND used_at IS NULL)`;
  const results = await run.write(
    resultsOf([
      qb
        .insertInto('login_log')
        .columns([...facts.map(([k]) => k as 'ip'), 'status', 'msg', 'factor'])
        .expression(
          qb.selectNoFrom((eb) => [
            ...facts.map(([k, v]) => eb.val(v).as(k)),
            sql<string>`CASE WHEN ${current} THEN 'success' ELSE 'failure' END`.as('status'),
            sql<string>`CASE WHEN ${current} THEN ${successMsg(accepted.factor)} || CASE WHEN ${accepted.factor} = 'recovery' THEN ' (' || (${recoveryLeft} - 1) || ' recovery codes left)' ELSE '' END
              WHEN NOT ${stillHash} THEN ${BAD_CREDENTIALS} WHEN NOT ${userCurrent} THEN ${DISABLED}
              WHEN NOT ${challengeLive} THEN ${CHALLENGE_GONE} ELSE ${WRONG_FACTOR} END`.as('msg'),
            sql<string | null>`CASE WHEN ${current} THEN ${accepted.factor} ELSE NULL END`.as('factor'),
          ]),
        )
        .returning(['status', 'msg'])
        .compile(),
      sql`INSERT INTO sessions (id, user_id, ip, user_agent, browser, os, login_at, expires_at, revoked_at)
        SELECT ${sessionId}, ${userId}, ${client.ip}, ${client.userAgent}, ${client.browser}, ${client.os}, ${now}, ${expiresAt}, NULL
        WHERE ${current}`.compile(qb),
      ...accepted.useUp.map((q) => ({ ...q, sql: `${q.sql} AND EXISTS (SELECT 1 FROM sessions WHERE id = ?)`, parameters: [...q.parameters, sessionId] }) as CompiledQuery),
      sql`UPDATE users SET last_login_at = ${now}, last_login_ip = ${client.ip} WHERE id = ${userId} AND ${opened}`.compile(qb),
      sql`DELETE FROM rate_limits WHERE key = ${nameKey} AND ${opened}`.compile(qb),
      sql`DELETE FROM mfa_challenges WHERE id = ${id} AND ${opened}`.compile(qb),
      release,
      sql`SELECT ${recoveryLeft} AS n`.compile(qb),
    ]),
  );
  const logged = results[0]?.rows[0] as { status: string; msg: string } | undefined;
  if (logged?.status !== 'success') {
    if (logged?.msg === DISABLED) throw forbidden(DISABLED);
    if (logged?.msg === WRONG_FACTOR) throw unauthorized(WRONG_FACTOR);
    throw unauthorized(logged?.msg === CHALLENGE_GONE ? CHALLENGE_GONE : BAD_CREDENTIALS);
  }
  const left = Number((results.at(-1)?.rows[0] as { n: number } | undefined)?.n ?? 0);
  return {
    token,
    tokenType: 'Bearer' as const,
    expiresIn: config.TOKEN_TTL_SECONDS,
    expiresAt,
    factor: accepted.factor,
    recoveryCodesLeft: accepted.factor === 'recovery' ? left : null,
  };
}

const successMsg = (factor: Method) =>
  factor === 'totp' ? 'Login succeeded (second factor: authenticator code)' : factor === 'passkey' ? 'Login succeeded (second factor: passkey)' : 'Login succeeded (second factor: recovery code)';
