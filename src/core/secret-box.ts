import { base64url } from 'jose';

/**
 * Secrets at rest (a TOTP secret in its user row): AES-256-GCM with the app's purpose-bound `mfa`
 * key (core/keys.ts), a fresh random 96-bit nonce per seal, and the caller's `context` (e.g.
 * `totp:user:42`) as additional authenticated data, so a sealed value copied into another user's
 * row, or another column, does not open. Text form: `v1.<nonce>.<ciphertext+tag>` in unpadded
 * base64url; the version names the algorithm and the key's derivation, so a later format can be
 * read beside this one.
 *
 * Random nonces under one key stay safe up to about 2^32 seals (NIST SP 800-38D §8.3); one seal
 * per enrolment is far below that.
 */
const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const B64URL = /^[A-Za-z0-9_-]+$/;

const enc = new TextEncoder();
const aad = (context: string) => enc.encode(`edge-admin:secret-box:${VERSION}:${context}`);

export async function sealSecret(key: CryptoKey, plaintext: Uint8Array, context: string): Promise<string> {
  const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad(context), tagLength: TAG_BYTES * 8 }, key, plaintext as BufferSource);
  return `${VERSION}.${base64url.encode(nonce)}.${base64url.encode(new Uint8Array(sealed))}`;
}

/** Strict unpadded base64url: one spelling per byte string, or null. */
function decodeStrict(text: string): Uint8Array | null {
  if (!B64URL.test(text)) return null;
  try {
    const bytes = base64url.decode(text);
    return base64url.encode(bytes) === text ? bytes : null;
  } catch {
    return null;
  }
}

/**
 * The plaintext, or null when the text is not a box of a known version, was changed, was sealed
 * under another key (another JWT_SECRET) or for another context. The caller decides what a null
 * means there (for a stored factor: unusable, never "no factor").
 */
export async function openSecret(key: CryptoKey, box: string, context: string): Promise<Uint8Array | null> {
  const parts = box.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return null;
  const nonce = decodeStrict(parts[1]!);
  const sealed = decodeStrict(parts[2]!);
  if (!nonce || nonce.byteLength !== NONCE_BYTES || !sealed || sealed.byteLength < TAG_BYTES) return null;
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: nonce as BufferSource, additionalData: aad(context), tagLength: TAG_BYTES * 8 }, key, sealed as BufferSource);
    return new Uint8Array(plain);
  } catch {
    return null; // OperationError: the tag did not verify
  }
}
