// Short-lived signed links for file download/preview.
//
// These let an <img> tag or a plain browser navigation fetch a file without an
// Authorization header. The signature binds the action, the file id and the
// expiry, so a preview link cannot be replayed as a download link, pointed at
// another file, or extended.

export type LinkAction = 'download' | 'preview';

// HMAC keys shorter than the hash output weaken the MAC (RFC 2104 §3), and an
// empty or tiny secret almost always means a missing env variable.
const MIN_SECRET_BYTES = 32;

// Caching the promise (not the key) means concurrent first requests share one
// importKey call. Keyed by array identity: pass the same Uint8Array instance
// on every call, otherwise the cache never hits.
const keyCache = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function hmacKey(secret: Uint8Array): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    if (secret.byteLength < MIN_SECRET_BYTES) {
      return Promise.reject(new Error(`signed-url: secret must be at least ${MIN_SECRET_BYTES} bytes`));
    }
    // Copy so later mutation of the caller's buffer cannot desync the cached
    // key, and so the view is backed by a plain ArrayBuffer as BufferSource
    // requires.
    key = crypto.subtle.importKey('raw', new Uint8Array(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
      'verify',
    ]);
    keyCache.set(secret, key);
    // A failed import must not poison the cache forever.
    key.catch(() => keyCache.delete(secret));
  }
  return key;
}

function isAction(a: unknown): a is LinkAction {
  return a === 'download' || a === 'preview';
}

function validFields(action: unknown, id: number, expiresAtSec: number): boolean {
  return isAction(action) && Number.isSafeInteger(id) && id >= 0 && Number.isSafeInteger(expiresAtSec) && expiresAtSec >= 0;
}

const encoder = new TextEncoder();

function message(action: LinkAction, id: number, expiresAtSec: number): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${action}:${id}:${expiresAtSec}`) as Uint8Array<ArrayBuffer>;
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// 32 bytes -> 43 chars; the final char carries 2 unused bits that must be 0.
// Rejecting non-canonical encodings keeps exactly one valid string per link.
const SIG_RE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

function fromBase64Url(s: string): Uint8Array<ArrayBuffer> | null {
  if (!SIG_RE.test(s)) return null;
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '=');
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** base64url (unpadded) HMAC-SHA256 over `${action}:${id}:${expiresAtSec}`. */
export async function signLink(
  secret: Uint8Array,
  action: LinkAction,
  id: number,
  expiresAtSec: number,
): Promise<string> {
  if (!validFields(action, id, expiresAtSec)) {
    throw new Error('signed-url: action must be download|preview, id and expiry non-negative integers');
  }
  const key = await hmacKey(secret);
  const mac = await crypto.subtle.sign('HMAC', key, message(action, id, expiresAtSec));
  return toBase64Url(new Uint8Array(mac));
}

/**
 * The signature is checked before the expiry so that "expired" is only ever
 * reported for links we actually issued. Comparison happens inside
 * crypto.subtle.verify, which is constant-time, unlike a JS string compare.
 * A link is valid up to and including second `expiresAtSec`.
 */
export async function verifyLink(
  secret: Uint8Array,
  action: LinkAction,
  id: number,
  expiresAtSec: number,
  sig: string,
  nowSec: number,
): Promise<'ok' | 'expired' | 'invalid'> {
  if (!validFields(action, id, expiresAtSec) || typeof sig !== 'string') return 'invalid';
  const mac = fromBase64Url(sig);
  if (!mac) return 'invalid';
  const key = await hmacKey(secret);
  const ok = await crypto.subtle.verify('HMAC', key, mac, message(action, id, expiresAtSec));
  if (!ok) return 'invalid';
  // NaN now must not make a link immortal: only a finite clock can pass.
  if (!Number.isFinite(nowSec) || nowSec > expiresAtSec) return 'expired';
  return 'ok';
}

/** Query string `id=..&exp=..&sig=..`; every value is already URL-safe. */
export async function signedQuery(
  secret: Uint8Array,
  action: LinkAction,
  id: number,
  ttlSec: number,
  nowSec: number,
): Promise<string> {
  if (!Number.isSafeInteger(ttlSec) || ttlSec <= 0) throw new Error('signed-url: ttlSec must be a positive integer');
  const exp = Math.floor(nowSec) + ttlSec;
  const sig = await signLink(secret, action, id, exp);
  return `id=${id}&exp=${exp}&sig=${sig}`;
}
