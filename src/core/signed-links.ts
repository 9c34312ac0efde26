import { base64url } from 'jose';

// Short-lived signed links for file download/preview.
//
// These let an <img> tag or a plain browser navigation fetch a file without an
// Authorization header. The signature binds the action, the file id, the session
// that got the link and the expiry, so a preview link cannot be replayed as a
// download link, pointed at another file or another session, or extended. The
// route serving a link reads the file row and whether that session is still live
// in one statement (modules/files): the link stops working when its session ends
// (logout, force logout, password change or reset, disable, delete). The key is
// the app's purpose-bound links key (core/keys.ts: `deps.keys.links()`).

export type LinkAction = 'download' | 'preview';

function isAction(a: unknown): a is LinkAction {
  return a === 'download' || a === 'preview';
}

/** A session id as tokens carry it (`jti`, a UUID): no `:` (the message's separator), no `&`. */
const SESSION_RE = /^[A-Za-z0-9_-]{1,64}$/;

function validFields(action: unknown, id: number, session: unknown, expiresAtSec: number): boolean {
  return (
    isAction(action) &&
    Number.isSafeInteger(id) &&
    id >= 0 &&
    typeof session === 'string' &&
    SESSION_RE.test(session) &&
    Number.isSafeInteger(expiresAtSec) &&
    expiresAtSec >= 0
  );
}

const encoder = new TextEncoder();

function message(action: LinkAction, id: number, session: string, expiresAtSec: number): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${action}:${id}:${session}:${expiresAtSec}`) as Uint8Array<ArrayBuffer>;
}

// 32 bytes -> 43 chars; the final char carries 2 unused bits that must be 0.
// Rejecting non-canonical encodings keeps exactly one valid string per link.
const SIG_RE = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/** base64url (unpadded) HMAC-SHA256 over `${action}:${id}:${session}:${expiresAtSec}`. */
export async function signLink(key: CryptoKey, action: LinkAction, id: number, session: string, expiresAtSec: number): Promise<string> {
  if (!validFields(action, id, session, expiresAtSec)) {
    throw new Error('signed-url: action must be download|preview, id and expiry non-negative integers, session a session id');
  }
  const mac = await crypto.subtle.sign('HMAC', key, message(action, id, session, expiresAtSec));
  return base64url.encode(new Uint8Array(mac));
}

/**
 * The signature is checked before the expiry so that "expired" is only ever
 * reported for links we actually issued. Comparison happens inside
 * crypto.subtle.verify, which is constant-time, unlike a JS string compare.
 * A link is valid up to and including second `expiresAtSec`. Whether its
 * session is still live is the serving route's question (a database read).
 */
export async function verifyLink(
  key: CryptoKey,
  action: LinkAction,
  id: number,
  session: string,
  expiresAtSec: number,
  sig: string,
  nowSec: number,
): Promise<'ok' | 'expired' | 'invalid'> {
  if (!validFields(action, id, session, expiresAtSec) || typeof sig !== 'string') return 'invalid';
  if (!SIG_RE.test(sig)) return 'invalid';
  const mac = base64url.decode(sig) as Uint8Array<ArrayBuffer>;
  const ok = await crypto.subtle.verify('HMAC', key, mac, message(action, id, session, expiresAtSec));
  if (!ok) return 'invalid';
  // NaN now must not make a link immortal: only a finite clock can pass.
  if (!Number.isFinite(nowSec) || nowSec > expiresAtSec) return 'expired';
  return 'ok';
}

/** Query string `id=..&exp=..&s=..&sig=..`; every value is already URL-safe. */
export async function signedQuery(
  key: CryptoKey,
  action: LinkAction,
  id: number,
  session: string,
  ttlSec: number,
  nowSec: number,
): Promise<string> {
  if (!Number.isSafeInteger(ttlSec) || ttlSec <= 0) throw new Error('signed-url: ttlSec must be a positive integer');
  const exp = Math.floor(nowSec) + ttlSec;
  const sig = await signLink(key, action, id, session, exp);
  return `id=${id}&exp=${exp}&s=${session}&sig=${sig}`;
}
