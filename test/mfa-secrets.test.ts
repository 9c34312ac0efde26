import { describe, expect, test } from 'bun:test';
import { base64url } from 'jose';
import { createKeys } from '../src/core/keys.ts';
import { generateRecoveryCodes, hashRecoveryCode, normaliseRecoveryCode, RECOVERY_ALPHABET, RECOVERY_CODE_COUNT } from '../src/core/recovery-codes.ts';
import { openSecret, sealSecret } from '../src/core/secret-box.ts';

const enc = new TextEncoder();
const keys = createKeys(enc.encode('mfa-test-secret-mfa-test-secret-0001'));
const otherKeys = createKeys(enc.encode('mfa-test-secret-mfa-test-secret-0002'));
const SECRET = enc.encode('12345678901234567890');
const CONTEXT = 'totp:user:42';

describe('keys: the mfa purposes', () => {
  test('the sealing key is AES-GCM-256 and not extractable; the recovery key is HMAC-SHA-256', async () => {
    const aes = await keys.mfa();
    expect(aes.algorithm).toMatchObject({ name: 'AES-GCM', length: 256 });
    expect(aes.extractable).toBe(false);
    expect(aes.usages.sort()).toEqual(['decrypt', 'encrypt']);
    expect((await keys.mfaRecovery()).algorithm).toMatchObject({ name: 'HMAC', hash: { name: 'SHA-256' } });
    expect(await keys.mfa()).toBe(aes); // imported once per app
  });

  test('purposes are separate: the recovery key does not reproduce a links or captcha MAC', async () => {
    const sign = async (k: CryptoKey) => base64url.encode(new Uint8Array(await crypto.subtle.sign('HMAC', k, enc.encode('x'))));
    const all = await Promise.all([keys.mfaRecovery(), keys.links(), keys.captcha(), keys.jwt()]);
    const macs = await Promise.all(all.map(sign));
    expect(new Set(macs).size).toBe(4);
  });
});

describe('secret box', () => {
  test('round trips; the text is v1.<12-byte nonce>.<ciphertext+16-byte tag>', async () => {
    const key = await keys.mfa();
    const box = await sealSecret(key, SECRET, CONTEXT);
    expect(box).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(base64url.decode(box.split('.')[2]!).byteLength).toBe(SECRET.byteLength + 16);
    expect(await openSecret(key, box, CONTEXT)).toEqual(SECRET);
    expect(box).not.toContain(base64url.encode(SECRET).slice(0, 8));
  });

  test('a fresh nonce per seal: the same secret seals differently each time', async () => {
    const key = await keys.mfa();
    const boxes = await Promise.all(Array.from({ length: 20 }, () => sealSecret(key, SECRET, CONTEXT)));
    expect(new Set(boxes.map((b) => b.split('.')[1])).size).toBe(20);
    for (const b of boxes) expect(await openSecret(key, b, CONTEXT)).toEqual(SECRET);
  });

  test('another key (another JWT_SECRET) does not open it', async () => {
    const box = await sealSecret(await keys.mfa(), SECRET, CONTEXT);
    expect(await openSecret(await otherKeys.mfa(), box, CONTEXT)).toBeNull();
  });

  test('another context (another user, another column) does not open it', async () => {
    const box = await sealSecret(await keys.mfa(), SECRET, CONTEXT);
    expect(await openSecret(await keys.mfa(), box, 'totp:user:43')).toBeNull();
    expect(await openSecret(await keys.mfa(), box, '')).toBeNull();
  });

  test('every changed bit of nonce or ciphertext+tag is refused', async () => {
    const key = await keys.mfa();
    const box = await sealSecret(key, SECRET, CONTEXT);
    const [v, n, c] = box.split('.') as [string, string, string];
    for (const [part, rebuild] of [
      [n, (x: string) => `${v}.${x}.${c}`],
      [c, (x: string) => `${v}.${n}.${x}`],
    ] as const) {
      const bytes = base64url.decode(part);
      for (let bit = 0; bit < bytes.byteLength * 8; bit++) {
        const t = bytes.slice();
        t[bit >> 3]! ^= 1 << (bit & 7);
        expect(await openSecret(key, rebuild(base64url.encode(t)), CONTEXT)).toBeNull();
      }
    }
  });

  test('malformed text, unknown version, cut tag, padding, other alphabets: null, never a throw', async () => {
    const key = await keys.mfa();
    const box = await sealSecret(key, SECRET, CONTEXT);
    const [, n, c] = box.split('.') as [string, string, string];
    for (const bad of ['', 'v1', 'v1..', `v2.${n}.${c}`, `V1.${n}.${c}`, `v1.${n}.${c}.x`, `v1.${n}.${c.slice(0, 20)}`, `v1.${n.slice(1)}.${c}`, `v1.${n}=.${c}`, `v1.${n}.${c}+/`, `v1.${n}.${c.slice(0, -2)}`])
      expect(await openSecret(key, bad, CONTEXT)).toBeNull();
  });
});

describe('secret box: one spelling per box', () => {
  test('unused low bits set in the last base64url character: refused, though the bytes are the same', async () => {
    const key = await keys.mfa();
    // 21 bytes + 16 tag = 37 bytes = 50 characters, the last carrying 4 unused bits
    const box = await sealSecret(key, enc.encode('123456789012345678901'), CONTEXT);
    const last = box.at(-1)!;
    const ALPHA = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = ALPHA[ALPHA.indexOf(last) | 1]!; // same high 2 bits, a low bit set
    expect(sibling).not.toBe(last);
    const other = box.slice(0, -1) + sibling;
    const ct = (b: string) => base64url.decode(b.split('.')[2]!);
    expect(ct(other)).toEqual(ct(box)); // jose's decoder alone accepts the other spelling
    expect(await openSecret(key, box, CONTEXT)).not.toBeNull();
    expect(await openSecret(key, other, CONTEXT)).toBeNull();
  });
});

describe('recovery codes', () => {
  test('10 distinct codes xxxx-xxxx-xxxx from 31 look-alike-free symbols: ≥ 50 bits each', () => {
    const codes = generateRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const c of codes) expect(c).toMatch(/^[23456789a-hjkmnp-z]{4}-[23456789a-hjkmnp-z]{4}-[23456789a-hjkmnp-z]{4}$/);
    expect(RECOVERY_ALPHABET).toHaveLength(31);
    expect(RECOVERY_ALPHABET).not.toMatch(/[01ilo]/);
    expect(12 * Math.log2(RECOVERY_ALPHABET.length)).toBeGreaterThanOrEqual(50);
  });

  test('symbols are uniform: rejection sampling, no modulo bias (chi-square over 31 000 symbols)', () => {
    const counts = new Map<string, number>();
    for (const code of generateRecoveryCodes(2600)) for (const ch of code.replaceAll('-', '')) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const expected = total / 31;
    const chi2 = [...RECOVERY_ALPHABET].reduce((s, ch) => s + ((counts.get(ch) ?? 0) - expected) ** 2 / expected, 0);
    // 30 degrees of freedom: p = 1e-6 at about 80
    expect(chi2).toBeLessThan(80);
  });

  test('bytes 248..255 are never used (they would favour the first 8 symbols)', () => {
    let calls = 0;
    const biased = (n: number) => {
      calls++;
      return calls === 1 ? new Uint8Array(n).fill(250) : new Uint8Array(n).map((_, i) => i % 31);
    };
    const [code] = generateRecoveryCodes(1, biased);
    expect(calls).toBe(2);
    expect(code).toBe('2345-6789-abcd');
  });

  test('normalises case, spaces, dashes and underscores; refuses anything else', () => {
    const [code] = generateRecoveryCodes(1) as [string];
    const bare = code.replaceAll('-', '');
    for (const typed of [code, code.toUpperCase(), ` ${bare} `, bare.replace(/(....)/g, '$1 '), code.replaceAll('-', '_'), `${code.slice(0, 4)} - ${code.slice(5)}`])
      expect(normaliseRecoveryCode(typed)).toBe(bare);
    for (const bad of ['', bare.slice(1), `${bare}2`, bare.replace(/.$/, '0'), bare.replace(/.$/, 'l'), bare.replace(/.$/, '.'), `${bare.slice(0, 11)}é`])
      expect(normaliseRecoveryCode(bad)).toBeNull();
  });

  test('hash: keyed, deterministic for every spelling of one code, different per code and per key', async () => {
    const [a, b] = generateRecoveryCodes(2) as [string, string];
    const key = await keys.mfaRecovery();
    const h = await hashRecoveryCode(key, a);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashRecoveryCode(key, a.toUpperCase().replaceAll('-', ' '))).toBe(h);
    expect(await hashRecoveryCode(key, b)).not.toBe(h);
    expect(await hashRecoveryCode(await otherKeys.mfaRecovery(), a)).not.toBe(h);
    expect(await hashRecoveryCode(key, 'not a code')).toBeNull();
  });
});
