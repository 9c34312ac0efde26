import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { sql, type CompiledQuery } from 'kysely';
import { hmacHex } from '../../core/keys.ts';
import type { Clock, Ports } from '../../core/ports.ts';
import { generateRecoveryCodes, hashRecoveryCode } from '../../core/recovery-codes.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import type { RelyingParty, StoredPasskey } from './webauthn.ts';

/**
 * What the own-account routes and the login flow share: the stored factors of a user, the sealed
 * TOTP secret's context, challenges by keyed hash, the recovery-code writes, the relying party.
 */

/** A challenge lives 5 minutes (the login's, and a passkey registration's). */
export const CHALLENGE_MS = 5 * 60_000;

/** The AAD context of a user's sealed TOTP secret (a box copied into another row does not open). */
export const totpContext = (userId: number) => `totp:user:${userId}`;

/** The stored id of a challenge: a keyed hash of what the client holds (a leaked table opens nothing). */
export async function challengeId(deps: Pick<Ports, 'keys'>, kind: 'login' | 'register', token: string): Promise<string> {
  return hmacHex(await deps.keys.mfaRecovery(), `mfa-challenge:${kind}:${token}`);
}

/** 24 random bytes, base64url: a login challenge's secret part. */
export const randomToken = () => isoBase64URL.fromBuffer(crypto.getRandomValues(new Uint8Array(24)));

/** Fresh recovery codes (display form) and the statements that replace the user's set with them. */
export async function newRecoveryCodes(deps: Pick<Ports, 'keys'>, userId: number, onlyIf?: ReturnType<typeof sql>) {
  const codes = generateRecoveryCodes();
  const key = await deps.keys.mfaRecovery();
  const hashes = await Promise.all(codes.map(async (c) => (await hashRecoveryCode(key, c))!));
  const cond = onlyIf ? sql` AND ${onlyIf}` : sql``;
  const statements: CompiledQuery[] = [
    sql`DELETE FROM mfa_recovery_codes WHERE user_id = ${userId}${cond}`.compile(qb),
    sql`INSERT INTO mfa_recovery_codes (user_id, code_hash, used_at)
      SELECT ${userId}, value, NULL FROM json_each(${JSON.stringify(hashes)}) WHERE 1${cond}`.compile(qb),
  ];
  return { codes, statements };
}

/** users.mfa_enabled recomputed from the factor tables: the last statement of every batch that changes them. */
export const mfaStateQuery = (userId: number) =>
  sql`UPDATE users SET mfa_enabled = (EXISTS (SELECT 1 FROM mfa_totp st WHERE st.user_id = ${userId} AND st.confirmed_at IS NOT NULL)
    OR EXISTS (SELECT 1 FROM mfa_passkeys sp WHERE sp.user_id = ${userId})) WHERE id = ${userId}`.compile(qb);

/** What a user's factors are, for the login's `methods` and the status answer (SQL, one row per user). */
export const factorColumns = (userRef: ReturnType<typeof sql> | string) => {
  const u = typeof userRef === 'string' ? sql.raw(userRef) : userRef;
  return {
    hasTotp: sql<number>`EXISTS (SELECT 1 FROM mfa_totp ft WHERE ft.user_id = ${u} AND ft.confirmed_at IS NOT NULL)`,
    hasPasskey: sql<number>`EXISTS (SELECT 1 FROM mfa_passkeys fp WHERE fp.user_id = ${u})`,
    recoveryLeft: sql<number>`(SELECT count(*) FROM mfa_recovery_codes fr WHERE fr.user_id = ${u} AND fr.used_at IS NULL)`,
  };
};

export type Method = 'totp' | 'passkey' | 'recovery';

/** The methods a user may verify with, in the contract's order. */
export function methodsOf(r: { has_totp: number; has_passkey: number; recovery_left: number }): Method[] {
  const out: Method[] = [];
  if (r.has_totp === 1) out.push('totp');
  if (r.has_passkey === 1) out.push('passkey');
  if (Number(r.recovery_left) > 0) out.push('recovery');
  return out;
}

/** A stored passkey row as the WebAuthn wrapper wants it. */
export interface PasskeyRow {
  id: number;
  credential_id: string;
  public_key: string;
  counter: number;
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export function storedPasskey(r: PasskeyRow): StoredPasskey {
  return { credentialId: r.credential_id, publicKey: isoBase64URL.toBuffer(r.public_key), counter: r.counter, transports: JSON.parse(r.transports) as string[] };
}

export const PASSKEY_COLUMNS = ['id', 'credential_id', 'public_key', 'counter', 'transports', 'name', 'created_at', 'last_used_at'] as const;

export const passkeysOf = (userId: number | ReturnType<typeof sql>) =>
  qb.selectFrom('mfa_passkeys').select(PASSKEY_COLUMNS).where('user_id', '=', userId as number).orderBy('id').compile();

/** The public face of a passkey (never its key or counter). */
export const passkeyRecord = (r: PasskeyRow) => ({ id: r.id, name: r.name, createdAt: r.created_at, lastUsedAt: r.last_used_at });

/**
 * The relying party passkeys are bound to: WEBAUTHN_RP_ID (else PUBLIC_URL's host, else
 * localhost) and the origins a ceremony may come from (WEBAUTHN_ORIGINS, else CORS_ORIGINS plus
 * PUBLIC_URL's origin). Configuration only, never a request header.
 */
export function relyingParty(config: Ports['config']): RelyingParty {
  const publicUrl = config.PUBLIC_URL ? new URL(config.PUBLIC_URL) : undefined;
  const id = config.WEBAUTHN_RP_ID ?? publicUrl?.hostname ?? 'localhost';
  const origins = config.WEBAUTHN_ORIGINS.length > 0 ? config.WEBAUTHN_ORIGINS : [...config.CORS_ORIGINS, ...(publicUrl ? [publicUrl.origin] : [])];
  return { id, name: config.MFA_ISSUER, origins };
}

export const expiresAt = (clock: Clock) => isoNow(clock, CHALLENGE_MS);

/** The challenge a WebAuthn response answers (clientDataJSON.challenge), or null for a malformed one. */
export function answeredChallenge(clientDataJSON: unknown): string | null {
  if (typeof clientDataJSON !== 'string') return null;
  try {
    const parsed = JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}
