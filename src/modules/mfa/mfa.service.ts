import { isoBase64URL } from '@simplewebauthn/server/helpers';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { sql } from 'kysely';
import { mfaRoleSql } from '../../access/auth-statement.ts';
import { base32Encode } from '../../core/base32.ts';
import { badRequest, notFound, tooMany } from '../../core/errors.ts';
import type { Ports } from '../../core/ports.ts';
import { qrSvgDataUrl } from '../../core/qr.ts';
import { openSecret, sealSecret } from '../../core/secret-box.ts';
import { isoNow } from '../../core/time.ts';
import { generateTotpSecret, otpauthUri, verifyTotp } from '../../core/totp.ts';
import { qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import { readsOf, resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { hitQuery, lockedForQuery, lockedMs, NAME_RULE } from '../auth/index.ts';
import {
  answeredChallenge,
  challengeId,
  expiresAt,
  factorColumns,
  newRecoveryCodes,
  passkeyRecord,
  passkeysOf,
  relyingParty,
  totpContext,
  mfaStateQuery,
  type PasskeyRow,
} from './factors.ts';
import { passkeyRegistrationOptions, verifyPasskeyRegistration } from './webauthn.ts';

/**
 * One's own second factor (contract: "Second factor"): TOTP enrolment, confirmation and removal,
 * recovery codes, passkeys, and the state of it all. Every route acts on the token's user only.
 */

const WRONG_CODE = 'code: is wrong or has expired';
const NO_TOTP = 'TOTP is not enabled for this account';

/** The state of one's factors: never a secret, a key or a code. */
export async function mfaStatus(run: Runner) {
  const me = run.userId;
  const f = factorColumns(sql`${me}`);
  return run.read({
    reads: [
      sql`SELECT ${f.hasTotp} AS has_totp, ${f.recoveryLeft} AS recovery_left, ${sql.raw(mfaRoleSql(String(Number(me))))} AS required`.compile(qb),
      passkeysOf(me),
    ],
    finish: ([state, passkeys]) => {
      const s = state![0] as { has_totp: number; recovery_left: number; required: number };
      return {
        totp: s.has_totp === 1,
        passkeys: (passkeys as PasskeyRow[]).map(passkeyRecord),
        recoveryCodesLeft: Number(s.recovery_left),
        required: s.required === 1,
      };
    },
  });
}

/** Starts (or restarts) a TOTP enrolment: a new secret, not active until confirmed. */
export async function startTotp(deps: Ports, run: Runner) {
  const auth = await run.caller();
  const secret = generateTotpSecret();
  const box = await sealSecret(await deps.keys.mfa(), secret, totpContext(auth.userId));
  const now = isoNow(deps.clock);
  const [upsert] = await run.write(
    resultsOf([
      sql`INSERT INTO mfa_totp (user_id, secret, confirmed_at, last_step, created_at) VALUES (${auth.userId}, ${box}, NULL, NULL, ${now})
        ON CONFLICT (user_id) DO UPDATE SET secret = excluded.secret, last_step = NULL, created_at = excluded.created_at
        WHERE mfa_totp.confirmed_at IS NULL
        RETURNING user_id`.compile(qb),
    ]),
  );
  if (!upsert?.rows.length) throw badRequest('TOTP is already enabled; disable it first to enrol a new secret');
  const uri = otpauthUri({ issuer: deps.config.MFA_ISSUER, account: auth.loginName.replaceAll(':', '_') }, secret);
  return { secret: base32Encode(secret), otpauthUri: uri, qrSvg: qrSvgDataUrl(uri) };
}

/** The pending or active TOTP row of the caller, with the auth statement (one read). */
function totpRow(run: Runner) {
  return run.first<{ secret: string; confirmed_at: string | null; last_step: number | null }>(
    qb.selectFrom('mfa_totp').select(['secret', 'confirmed_at', 'last_step']).where('user_id', '=', run.userId).compile(),
  );
}

/** Confirms the enrolment with a first code: the factor is active, 10 new recovery codes (shown once). */
export async function confirmTotp(deps: Ports, run: Runner, input: { code: string }) {
  const row = await totpRow(run);
  const me = run.userId;
  if (!row) throw badRequest('No TOTP enrolment is under way; start one first');
  if (row.confirmed_at) throw badRequest('TOTP is already enabled');
  const secret = await openSecret(await deps.keys.mfa(), row.secret, totpContext(me));
  if (!secret) throw badRequest('The enrolment cannot be read any more (the server secret changed); start again');
  const step = await verifyTotp(secret, input.code, deps.clock.now());
  if (step === null) throw badRequest(WRONG_CODE);
  const { codes, statements } = await newRecoveryCodes(deps, me);
  await run.write(
    resultsOf([
      // The enrolment confirmed is the one checked (a restart in between: 409, nothing changed).
      guardStatement('stale_version', sql`NOT EXISTS (SELECT 1 FROM mfa_totp WHERE user_id = ${me} AND secret = ${row.secret} AND confirmed_at IS NULL)`),
      // The confirming code is used: it cannot log in again in its window.
      sql`UPDATE mfa_totp SET confirmed_at = ${isoNow(deps.clock)}, last_step = ${step} WHERE user_id = ${me}`.compile(qb),
      ...statements,
      mfaStateQuery(me),
    ]),
  );
  return { recoveryCodes: codes };
}

/**
 * Checks a current TOTP code of the caller for a change of their factors (disable, new recovery
 * codes): wrong tries are throttled like wrong passwords (per user, counted before the check), the
 * code is used up (replay) in the change's own batch. Returns the step and the batch's guard.
 */
async function checkOwnCode(deps: Ports, run: Runner, code: string, password?: string) {
  const me = run.userId;
  const key = `mfa-change:${me}`;
  const [rowRes, userRes, lockRes, countRes] = await run.write(
    resultsOf(
      [
        qb.selectFrom('mfa_totp').select(['secret', 'confirmed_at', 'last_step']).where('user_id', '=', me).compile(),
        qb.selectFrom('users').select(['password_hash']).where('id', '=', me).compile(),
        lockedForQuery(deps.clock, [key]),
        hitQuery(deps.clock, key, NAME_RULE, { unlessLocked: true }).compile(),
      ],
      { anyCaller: true },
    ),
  );
  const row = rowRes?.rows[0] as { secret: string; confirmed_at: string | null; last_step: number | null } | undefined;
  const lockMs = lockedMs(deps.clock, lockRes?.rows);
  const counted = countRes?.rows[0] as { count: number; locked_until: string | null } | undefined;
  if (lockMs > 0 || !counted || counted.count > NAME_RULE.limit) throw tooMany(Math.max(lockMs, 1000) / 1000, 'Too many wrong codes, try again later');
  if (!row?.confirmed_at) throw badRequest(NO_TOTP);
  if (password !== undefined) {
    const hash = (userRes?.rows[0] as { password_hash: string } | undefined)?.password_hash;
    if (!hash || !(await deps.hasher.verify(hash, password))) throw badRequest('password: is incorrect');
  }
  const secret = await openSecret(await deps.keys.mfa(), row.secret, totpContext(me));
  const step = secret ? await verifyTotp(secret, code, deps.clock.now(), row.last_step) : null;
  if (step === null) throw badRequest(WRONG_CODE);
  return {
    step,
    clear: qb.deleteFrom('rate_limits').where('key', '=', key).compile(),
    // The code is used once: a concurrent change with the same code finds the step taken (409).
    use: [
      guardStatement('stale_version', sql`NOT EXISTS (SELECT 1 FROM mfa_totp WHERE user_id = ${me} AND confirmed_at IS NOT NULL AND coalesce(last_step, -1) < ${step})`),
      sql`UPDATE mfa_totp SET last_step = ${step} WHERE user_id = ${me}`.compile(qb),
    ],
  };
}

/** Turns TOTP off (the password and a current code); recovery codes go too when no factor is left. */
export async function disableTotp(deps: Ports, run: Runner, input: { password: string; code: string }) {
  const me = run.userId;
  const { clear, use } = await checkOwnCode(deps, run, input.code, input.password);
  await run.write(
    resultsOf([
      ...use,
      clear,
      sql`DELETE FROM mfa_totp WHERE user_id = ${me}`.compile(qb),
      sql`DELETE FROM mfa_recovery_codes WHERE user_id = ${me} AND NOT EXISTS (SELECT 1 FROM mfa_passkeys WHERE user_id = ${me})`.compile(qb),
      mfaStateQuery(me),
    ]),
  );
}

/** New recovery codes (a current TOTP code); the old ones stop working. */
export async function regenerateRecoveryCodes(deps: Ports, run: Runner, input: { code: string }) {
  const { clear, use } = await checkOwnCode(deps, run, input.code);
  const { codes, statements } = await newRecoveryCodes(deps, run.userId);
  await run.write(resultsOf([...use, clear, ...statements]));
  return { recoveryCodes: codes };
}

/** Options for navigator.credentials.create(); the ceremony's challenge is kept 5 minutes, bound to this session. */
export async function passkeyOptions(deps: Ports, run: Runner) {
  const [existing] = await run.read(readsOf(passkeysOf(run.userId)));
  const auth = await run.caller();
  const options = await passkeyRegistrationOptions(
    relyingParty(deps.config),
    { id: auth.userId, loginName: auth.loginName },
    (existing as PasskeyRow[]).map((p) => ({ credentialId: p.credential_id, transports: JSON.parse(p.transports) as string[] })),
  );
  const now = isoNow(deps.clock);
  await run.write(
    resultsOf([
      // Expired options of this user go (no sweep needed for the table).
      qb.deleteFrom('mfa_challenges').where('user_id', '=', auth.userId).where('expires_at', '<=', now).compile(),
      qb
        .insertInto('mfa_challenges')
        .values({
          id: await challengeId(deps, 'register', options.challenge),
          kind: 'register',
          user_id: auth.userId,
          session_id: auth.sessionId,
          login_name: null,
          password_hash: null,
          webauthn_challenge: options.challenge,
          expires_at: expiresAt(deps.clock),
          created_at: now,
        })
        .compile(),
    ]),
  );
  return options;
}

/** Registers a passkey answering this session's options; the first factor of an account brings recovery codes. */
export async function registerPasskey(deps: Ports, run: Runner, input: { response: RegistrationResponseJSON; name?: string | undefined }) {
  const me = run.userId;
  const webauthnChallenge = answeredChallenge(input.response?.response?.clientDataJSON);
  if (!webauthnChallenge) throw badRequest('response: not a WebAuthn registration response');
  const id = await challengeId(deps, 'register', webauthnChallenge);
  const now = isoNow(deps.clock);
  const [challenge, state] = await run.read(
    readsOf(
      qb
        .selectFrom('mfa_challenges')
        .select(['webauthn_challenge'])
        .where('id', '=', id)
        .where('kind', '=', 'register')
        .where('user_id', '=', me)
        .where('session_id', '=', run.sessionId)
        .where('expires_at', '>', now)
        .compile(),
      sql`SELECT ${factorColumns(sql`${me}`).recoveryLeft} AS recovery_left`.compile(qb),
    ),
  );
  const expected = (challenge?.[0] as { webauthn_challenge: string } | undefined)?.webauthn_challenge;
  if (!expected) throw badRequest('response: the registration options have expired or were used; ask for new ones');
  const verified = await verifyPasskeyRegistration(relyingParty(deps.config), input.response, expected);
  if (!verified.ok) throw badRequest(`response: the passkey was not accepted (${verified.reason})`);
  const p = verified.value;
  const needCodes = Number((state?.[0] as { recovery_left: number }).recovery_left) === 0;
  const recovery = needCodes ? await newRecoveryCodes(deps, me) : undefined;
  const name = input.name?.trim() || `Passkey ${now.slice(0, 10)}`;
  const results = await run.write({
    batch: [
      // The options are used once: a second registration with the same answer finds them gone.
      guardStatement('stale_version', sql`NOT EXISTS (SELECT 1 FROM mfa_challenges WHERE id = ${id})`),
      qb.deleteFrom('mfa_challenges').where('id', '=', id).compile(),
      qb
        .insertInto('mfa_passkeys')
        .values({
          user_id: me,
          credential_id: p.credentialId,
          public_key: isoBase64URL.fromBuffer(new Uint8Array(p.publicKey)),
          counter: p.counter,
          transports: JSON.stringify(p.transports),
          name,
          created_at: now,
          last_used_at: null,
        })
        .compile(),
      ...(recovery?.statements ?? []),
      mfaStateQuery(me),
      qb.selectFrom('mfa_passkeys').select(['id', 'name', 'created_at', 'last_used_at']).where('credential_id', '=', p.credentialId).compile(),
    ],
    errors: { unique: 'response: this passkey is already registered', messages: { stale_version: 'response: the registration options have expired or were used; ask for new ones' } },
    finish: (r) => r.at(-1)!.rows[0] as PasskeyRow,
  });
  return { passkey: passkeyRecord(results), recoveryCodes: recovery?.codes ?? null };
}

/** Removes one of one's own passkeys; recovery codes go too when no factor is left. */
export async function deletePasskey(run: Runner, input: { id: number }) {
  const me = run.userId;
  const [deleted] = await run.write(
    resultsOf([
      sql`DELETE FROM mfa_passkeys WHERE id = ${input.id} AND user_id = ${me} RETURNING id`.compile(qb),
      mfaStateQuery(me),
      sql`DELETE FROM mfa_recovery_codes WHERE user_id = ${me} AND NOT EXISTS (SELECT 1 FROM users WHERE id = ${me} AND mfa_enabled = 1)`.compile(qb),
    ]),
  );
  if (!deleted?.rows.length) throw notFound('Passkey not found');
}
