import { base32Encode } from './base32.ts';
import { constantTimeEqual } from './keys.ts';

/**
 * TOTP (RFC 6238) over HOTP (RFC 4226) with the parameters every authenticator app supports:
 * HMAC-SHA-1, 6 digits, 30-second steps, one step of clock skew either way. Time is an input
 * (milliseconds, as `deps.clock.now()`), so tests pin it. Web Crypto only.
 */
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_WINDOW_STEPS = 1;
/** RFC 4226 §4 asks for at least 128 bits and recommends 160 (the SHA-1 output size). */
export const TOTP_SECRET_BYTES = 20;

export function generateTotpSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(TOTP_SECRET_BYTES));
}

/** The time step that holds `timeMs`: floor(unix seconds / 30). */
export function totpStep(timeMs: number): number {
  return Math.floor(timeMs / 1000 / TOTP_PERIOD_SECONDS);
}

async function hmacSha1Key(secret: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
}

async function hotpWithKey(key: CryptoKey, counter: number, digits: number): Promise<string> {
  if (!Number.isSafeInteger(counter) || counter < 0) throw new Error('totp: the counter must be a non-negative safe integer');
  const message = new Uint8Array(8); // the 8-byte big-endian counter
  const view = new DataView(message.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter >>> 0);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  const offset = mac[19]! & 0x0f; // dynamic truncation, RFC 4226 §5.3
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** HOTP value for one counter (RFC 4226). `digits` other than 6 only for the RFC's 8-digit vectors. */
export async function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): Promise<string> {
  return hotpWithKey(await hmacSha1Key(secret), counter, digits);
}

/** The code an authenticator shows at `timeMs`. */
export async function totpAt(secret: Uint8Array, timeMs: number, digits = TOTP_DIGITS): Promise<string> {
  return hotp(secret, totpStep(timeMs), digits);
}

/**
 * Checks a code typed at `timeMs` against the steps now-1 … now+1 and returns the step it matched,
 * or null. Replays: the caller stores the returned step and passes it back as `lastUsedStep`; no
 * step at or before it is accepted again, so a code works once and an older code never after a
 * newer one. Spaces in the input are ignored ("123 456"); anything but 6 digits is refused. Every
 * candidate is computed and compared in constant time, so the answer's timing does not say which
 * step (or whether any) matched.
 */
export async function verifyTotp(secret: Uint8Array, code: string, timeMs: number, lastUsedStep: number | null = null): Promise<number | null> {
  const typed = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(typed)) return null;
  const key = await hmacSha1Key(secret);
  const now = totpStep(timeMs);
  let matched: number | null = null;
  for (let step = now - TOTP_WINDOW_STEPS; step <= now + TOTP_WINDOW_STEPS; step++) {
    if (step < 0) continue;
    const equal = constantTimeEqual(await hotpWithKey(key, step, TOTP_DIGITS), typed);
    if (equal && matched === null && (lastUsedStep === null || step > lastUsedStep)) matched = step;
  }
  return matched;
}

export interface OtpauthLabel {
  /** Who issues the code (the app's name), shown as the entry's title in the authenticator. */
  issuer: string;
  /** The account it is for (the login name). */
  account: string;
}

/**
 * `otpauth://totp/<issuer>:<account>?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30` (the
 * Key Uri Format authenticator apps read). Issuer and account are percent-encoded (RFC 3986, so a
 * space is %20, never +); neither may hold a colon, which apps read as the issuer/account
 * separator even when encoded, nor be empty.
 */
export function otpauthUri(label: OtpauthLabel, secret: Uint8Array): string {
  for (const [name, value] of Object.entries(label)) {
    if (value.trim() === '' || value.includes(':')) throw new Error(`totp: the ${name} must be non-empty and hold no colon`);
  }
  const enc = encodeURIComponent;
  const query = `secret=${base32Encode(secret)}&issuer=${enc(label.issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}`;
  return `otpauth://totp/${enc(label.issuer)}:${enc(label.account)}?${query}`;
}
