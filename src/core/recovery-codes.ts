import { hmacHex } from './keys.ts';

/**
 * Recovery codes: 10 single-use codes shown once, `xxxx-xxxx-xxxx` from 31 symbols that cannot be
 * mistaken for one another (no 0/o, 1/l/i), 12 × log2(31) ≈ 59.4 bits each from the CSPRNG.
 *
 * Stored as HMAC-SHA-256 under the app's `mfaRecovery` key, not argon2: a slow hash buys time
 * against guessing LOW-entropy secrets; these codes are random and 59 bits wide, so even a fast
 * hash is out of reach of brute force (2^59 guesses, per code), and the key, which never sits in
 * the database, makes a stolen table worth nothing on its own. A keyed hash is also deterministic,
 * so a typed code is found by one indexed equality lookup instead of one argon2 run per stored
 * code (10 per user, per try, on Workers' CPU budget). Single use is the caller's: delete or mark
 * the row in the same write that accepts the code.
 */
export const RECOVERY_CODE_COUNT = 10;
export const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
const GROUPS = [4, 4, 4];
const LENGTH = GROUPS.reduce((a, b) => a + b, 0);
const SYMBOL = new RegExp(`^[${RECOVERY_ALPHABET}]{${LENGTH}}$`);

/** Random bytes; a parameter only so a test can pin it. */
export type RandomBytes = (n: number) => Uint8Array;
const cryptoBytes: RandomBytes = (n) => crypto.getRandomValues(new Uint8Array(n));

function randomSymbols(count: number, random: RandomBytes): string {
  // Rejection sampling: bytes ≥ 248 (= 8 × 31) are dropped, so `b % 31` is uniform.
  const limit = 256 - (256 % RECOVERY_ALPHABET.length);
  let out = '';
  while (out.length < count) {
    for (const b of random(count * 2)) {
      if (b < limit && out.length < count) out += RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length];
    }
  }
  return out;
}

function format(symbols: string): string {
  const parts: string[] = [];
  let at = 0;
  for (const g of GROUPS) parts.push(symbols.slice(at, (at += g)));
  return parts.join('-');
}

/** `count` distinct codes in display form (`7kq2-mx9f-3hdw`). */
export function generateRecoveryCodes(count = RECOVERY_CODE_COUNT, random: RandomBytes = cryptoBytes): string[] {
  const codes = new Set<string>();
  while (codes.size < count) codes.add(format(randomSymbols(LENGTH, random)));
  return [...codes];
}

/**
 * What a person typed → the canonical 12 symbols, or null if it cannot be a code. Case, spaces,
 * dashes and underscores do not matter; nothing else is guessed.
 */
export function normaliseRecoveryCode(input: string): string | null {
  const clean = input.toLowerCase().replace(/[\s_-]+/g, '');
  return SYMBOL.test(clean) ? clean : null;
}

/** The stored form: hex HMAC-SHA-256 of the canonical code under the `mfaRecovery` key. Null for input that is no code. */
export async function hashRecoveryCode(key: CryptoKey, input: string): Promise<string | null> {
  const code = normaliseRecoveryCode(input);
  return code === null ? null : hmacHex(key, `recovery-code:${code}`);
}
