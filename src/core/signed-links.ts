import { base64url } from 'jose';

// Short-lived signed links for file download/preview.
//
// These let an <img> tag or a plain browser navigation fetch a file without an
// Authorization header. The signature binds the action, the file id and the
// expiry, so a preview link cannot be replayed as a download link, pointed at
// another file, or extended. The key is the app's purpose-bound links key
// (core/keys.ts: `deps.keys.links()`), imported once per app.

export type LinkAction = 'download' | 'preview';

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

// 32 bytes -> 43 chars; the final char carries 2 unused bits that must be 0.
// Rejecting non-canonical encodings keeps exactly one valid string per link.
const SIG_RE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/** base64url (unpadded) HMAC-SHA256 over `${action}:${id}:${expiresAtSec}`. */
export async function signLink(
  key: CryptoKey,
  action: LinkAction,
  id: number,
  expiresAtSec: number,
): Promise<string> {
  if (!validFields(action, id, expiresAtSec)) {
    throw new Error('signed-url: action must be download|preview, id and expiry non-negative integers');
  }
  const mac = await crypto.subtle.sign('HMAC', key, message(action, id, expiresAtSec));
  return base64url.encode(new Uint8Array(mac));
}

/**
 * The signature is checked before the expiry so that "expired" is only ever
 * reported for links we actually issued. Comparison happens inside
 * crypto.subtle.verify, which is constant-time, unlike a JS string compare.
 * A link is valid up to and including second `expiresAtSec`.
 */
export async function verifyLink(
  key: CryptoKey,
  action: LinkAction,
  id: number,
  expiresAtSec: number,
  sig: string,
  nowSec: number,
): Promise<'ok' | 'expired' | 'invalid'> {
  if (!validFields(action, id, expiresAtSec) || typeof sig !== 'string') return 'invalid';
  if (!SIG_RE.test(sig)) return 'invalid';
  const mac = base64url.decode(sig) as Uint8Array<ArrayBuffer>;
  const ok = await crypto.subtle.verify('HMAC', key, mac, message(action, id, expiresAtSec));
  if (!ok) return 'invalid';
  // NaN now must not make a link immortal: only a finite clock can pass.
  if (!Number.isFinite(nowSec) || nowSec > expiresAtSec) return 'expired';
  return 'ok';
}

/** Query string `id=..&exp=..&sig=..`; every value is already URL-safe. */
export async function signedQuery(
  key: CryptoKey,
  action: LinkAction,
  id: number,
  ttlSec: number,
  nowSec: number,
): Promise<string> {
  if (!Number.isSafeInteger(ttlSec) || ttlSec <= 0) throw new Error('signed-url: ttlSec must be a positive integer');
  const exp = Math.floor(nowSec) + ttlSec;
  const sig = await signLink(key, action, id, exp);
  return `id=${id}&exp=${exp}&sig=${sig}`;
}
