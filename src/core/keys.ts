/**
 * Purpose-bound keys derived from the one configured secret, so a token signature can never be
 * replayed as a captcha hash or a file-link signature, and the key that seals second-factor
 * secrets shares no bytes with any MAC key. Imported once per app, then reused: the one key cache
 * of the app.
 */
export interface AppKeys {
  jwt(): Promise<CryptoKey>;
  captcha(): Promise<CryptoKey>;
  links(): Promise<CryptoKey>;
  /** AES-GCM-256 key that seals second-factor secrets at rest (core/secret-box.ts). */
  mfa(): Promise<CryptoKey>;
  /** HMAC key for recovery-code hashes (core/recovery-codes.ts); never the sealing key's bytes. */
  mfaRecovery(): Promise<CryptoKey>;
}

// HMAC keys shorter than the hash output weaken the MAC (RFC 2104 §3), and an empty or tiny
// secret almost always means a missing env variable.
const MIN_SECRET_BYTES = 32;

const enc = new TextEncoder();

async function derive(secret: Uint8Array, purpose: string): Promise<Uint8Array> {
  const base = await crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return new Uint8Array(await crypto.subtle.sign('HMAC', base, enc.encode(`edge-admin:${purpose}`)));
}

/** An HMAC-SHA256 key for sign and verify; refuses raw keys shorter than 32 bytes. */
export async function hmacKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.byteLength < MIN_SECRET_BYTES) throw new Error(`keys: an HMAC key must be at least ${MIN_SECRET_BYTES} bytes`);
  return crypto.subtle.importKey('raw', raw as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** A non-extractable AES-GCM-256 key for encrypt and decrypt. */
export async function aesGcmKey(raw: Uint8Array): Promise<CryptoKey> {
  if (raw.byteLength !== 32) throw new Error('keys: an AES-GCM key must be 32 bytes');
  return crypto.subtle.importKey('raw', raw as BufferSource, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

export function createKeys(secret: Uint8Array): AppKeys {
  return {
    jwt: once(async () => hmacKey(await derive(secret, 'jwt'))),
    captcha: once(async () => hmacKey(await derive(secret, 'captcha'))),
    links: once(async () => hmacKey(await derive(secret, 'links'))),
    mfa: once(async () => aesGcmKey(await derive(secret, 'mfa'))),
    mfaRecovery: once(async () => hmacKey(await derive(secret, 'mfa-recovery'))),
  };
}

/** Lower-case hex HMAC-SHA256 of `message`. */
export async function hmacHex(key: CryptoKey, message: string): Promise<string> {
  const sig = new Uint8Array(await crypto.subtle.sign('HMAC', key, enc.encode(message)));
  let out = '';
  for (const b of sig) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Compares two strings without an early exit, so timing does not reveal the matching prefix. */
export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
