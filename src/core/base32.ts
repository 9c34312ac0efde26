/**
 * RFC 4648 §6 base32 (A-Z 2-7) without padding: the alphabet authenticator apps expect for TOTP
 * secrets. Ours, not a library: two small loops, checked against the RFC's §10 vectors.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const VALUE: Record<string, number> = Object.fromEntries([...ALPHABET].map((c, i) => [c, i]));

export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = ((buffer << 8) | b) & 0xfff; // at most 4 leftover bits + 8 new ones are ever needed
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes base32, case-insensitive, ignoring spaces, dashes and trailing `=` (how people copy a
 * secret). Returns null for any other character, an impossible length (1, 3 or 6 symbols past a
 * whole group) or non-zero leftover bits, so each byte string has exactly one accepted spelling.
 */
export function base32Decode(text: string): Uint8Array | null {
  const clean = text.replace(/[\s-]+/g, '').replace(/=+$/, '').toUpperCase();
  if ([1, 3, 6].includes(clean.length % 8)) return null;
  const out = new Uint8Array(Math.floor((clean.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let i = 0;
  for (const c of clean) {
    const v = VALUE[c];
    if (v === undefined) return null;
    buffer = ((buffer << 5) | v) & 0xfff; // at most 7 leftover bits + 5 new ones
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[i++] = (buffer >> bits) & 0xff;
    }
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
