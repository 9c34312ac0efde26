import { base64url } from 'jose';

/**
 * API key secrets (docs/api-keys.md): `ea_<id>_<random>`, the random part 32 bytes (256 bits) from
 * the platform's CSPRNG, base64url (43 characters). Only SHA-256 of the random part is stored.
 *
 * Why a plain SHA-256 and not a slow password hash or an HMAC with the server secret: the secret is
 * 256 random bits, so no dictionary or brute force applies to a leaked hash (a slow hash protects
 * low-entropy secrets, and would cost milliseconds per request); and a keyless hash keeps keys
 * working across a JWT_SECRET rotation and a restore into a deployment with another secret. An
 * HMAC would only help if the stored hash could be inverted, and SHA-256 over 256 random bits
 * cannot be. The id is not secret: it finds the row (and its owner) by primary key.
 */
export const KEY_PREFIX = 'ea_';
export const KEY_PATTERN = /^ea_([1-9][0-9]{0,15})_([A-Za-z0-9_-]{43})$/;

/** A fresh random part (32 bytes, base64url). */
export function newKeyRandom(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
}

/** The full secret shown once. */
export const keySecret = (id: number, random: string) => `${KEY_PREFIX}${id}_${random}`;

/** SHA-256 of the random part, lowercase hex (what the row stores and the auth statement compares). */
export async function hashKeyRandom(random: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(random)));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return hex;
}

/** The key id and random part of a presented secret, or undefined when it is not one. */
export function parseKeySecret(text: string): { id: number; random: string } | undefined {
  const m = KEY_PATTERN.exec(text);
  if (!m) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? { id, random: m[2]! } : undefined;
}
