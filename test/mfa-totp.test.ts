import { describe, expect, test } from 'bun:test';
import { base32Decode, base32Encode } from '../src/core/base32.ts';
import { generateTotpSecret, hotp, otpauthUri, TOTP_SECRET_BYTES, totpAt, totpStep, verifyTotp } from '../src/core/totp.ts';

const enc = new TextEncoder();
// The RFC 4226 / RFC 6238 (SHA-1) test secret: ASCII "12345678901234567890".
const RFC_SECRET = enc.encode('12345678901234567890');

describe('base32 (RFC 4648 §10 vectors, no padding)', () => {
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ];
  test.each(vectors)('%p <-> %p', (plain, coded) => {
    expect(base32Encode(enc.encode(plain))).toBe(coded);
    expect(base32Decode(coded)).toEqual(enc.encode(plain));
  });

  test('decodes the padded RFC spelling, lower case, spaces and dashes the way people copy them', () => {
    expect(base32Decode('MZXW6YTBOI======')).toEqual(enc.encode('foobar'));
    expect(base32Decode('mzxw 6ytb-oi')).toEqual(enc.encode('foobar'));
  });

  test('refuses other characters, impossible lengths and non-zero leftover bits', () => {
    for (const bad of ['MZXW6YT1', 'MZXW6YT8', 'M', 'MZX', 'MZXW6Y', 'MZ!W', 'MZ']) {
      // 'MZ' is 'f' (canonical: MY): its last symbol carries leftover bits that are not zero
      expect(base32Decode(bad)).toBeNull();
    }
  });

  test('round trips random byte strings of every length 0..40', () => {
    for (let n = 0; n <= 40; n++) {
      const bytes = crypto.getRandomValues(new Uint8Array(n));
      expect(base32Decode(base32Encode(bytes))).toEqual(bytes);
    }
  });
});

describe('HOTP (RFC 4226 Appendix D)', () => {
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  test.each(expected.map((code, counter) => [counter, code] as const))('counter %d -> %s', async (counter, code) => {
    expect(await hotp(RFC_SECRET, counter)).toBe(code);
  });
});

describe('HOTP with counters of 2^32 and above (no RFC vector reaches them; values from Python hmac)', () => {
  // The counter is 8 bytes big-endian; a dropped high word would give counter mod 2^32's code.
  test.each([
    [2 ** 32, '999456'],
    [2 ** 32 + 1, '108930'],
    [2 ** 40 + 12345, '856491'],
  ])('counter %d -> %s', async (counter, code) => {
    expect(await hotp(RFC_SECRET, counter)).toBe(code);
  });

  test('refuses a counter that is negative, fractional or above 2^53', async () => {
    for (const bad of [-1, 1.5, 2 ** 53]) await expect(hotp(RFC_SECRET, bad)).rejects.toThrow('counter');
  });
});

describe('TOTP (RFC 6238 Appendix B, SHA-1, 8 digits; the 6-digit code is its last 6)', () => {
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];
  test.each(vectors)('T = %d s -> %s', async (seconds, code) => {
    expect(await totpAt(RFC_SECRET, seconds * 1000, 8)).toBe(code);
    expect(await totpAt(RFC_SECRET, seconds * 1000)).toBe(code.slice(2));
    expect(await verifyTotp(RFC_SECRET, code.slice(2), seconds * 1000)).toBe(totpStep(seconds * 1000));
  });
});

describe('verifyTotp: window, replay, input', () => {
  // Fixed secrets, so the collision guards below are facts checked once, not dice rolled per run.
  const secret = RFC_SECRET;
  const now = 1_750_000_015_000; // 15 s into a step
  const step = totpStep(now);
  const codeAt = (s: number) => hotp(secret, s);

  test('a fresh secret is 160 random bits', () => {
    const fresh = generateTotpSecret();
    expect(fresh.byteLength).toBe(TOTP_SECRET_BYTES);
    expect(generateTotpSecret()).not.toEqual(fresh);
  });

  test('accepts the current step and one either side (clock skew), and says which', async () => {
    expect(await verifyTotp(secret, await codeAt(step), now)).toBe(step);
    expect(await verifyTotp(secret, await codeAt(step - 1), now)).toBe(step - 1);
    expect(await verifyTotp(secret, await codeAt(step + 1), now)).toBe(step + 1);
  });

  test('refuses two steps away either side', async () => {
    for (const s of [step - 2, step + 2]) {
      const code = await codeAt(s);
      // a code of a far step that happens to equal a near step's code would be accepted rightly
      const near = await Promise.all([step - 1, step, step + 1].map(codeAt));
      if (near.includes(code)) throw new Error('collision between far and near codes: pick another `now`'); // fixed inputs: never
      expect(await verifyTotp(secret, code, now)).toBeNull();
    }
  });

  test('the window moves with the clock: a code of step s works until the end of step s+1', async () => {
    const code = await codeAt(step);
    const stepStart = step * 30_000;
    expect(await verifyTotp(secret, code, stepStart + 2 * 30_000 - 1)).toBe(step);
    expect(await verifyTotp(secret, code, stepStart + 2 * 30_000)).toBeNull();
    expect(await verifyTotp(secret, code, stepStart - 30_000)).toBe(step);
    expect(await verifyTotp(secret, code, stepStart - 30_000 - 1)).toBeNull();
  });

  test('replay: a code is refused once its step (or a later one) was used', async () => {
    const code = await codeAt(step);
    const used = await verifyTotp(secret, code, now);
    expect(used).toBe(step);
    expect(await verifyTotp(secret, code, now, used)).toBeNull();
    expect(await verifyTotp(secret, code, now + 20_000, used)).toBeNull();
    // an older code after a newer one was used
    expect(await verifyTotp(secret, await codeAt(step - 1), now, step)).toBeNull();
    // the next step's code is still good
    expect(await verifyTotp(secret, await codeAt(step + 1), now, step)).toBe(step + 1);
  });

  test('input: spaces ignored; anything but 6 digits refused; another secret refused', async () => {
    const code = await codeAt(step);
    expect(await verifyTotp(secret, ` ${code.slice(0, 3)} ${code.slice(3)} `, now)).toBe(step);
    for (const bad of ['', code.slice(0, 5), `${code}0`, `${code.slice(0, 5)}x`, `+${code.slice(1)}`, '１２３４５６'])
      expect(await verifyTotp(secret, bad, now)).toBeNull();
    const other = enc.encode('12345678901234567891');
    const near = await Promise.all([step - 1, step, step + 1].map((s) => hotp(other, s)));
    if (near.includes(code)) throw new Error('another secret produced the same code: pick another'); // fixed inputs: never
    expect(await verifyTotp(other, code, now)).toBeNull();
  });
});

describe('otpauth URI', () => {
  const secret = enc.encode('12345678901234567890');

  test('has the Key Uri Format fields and parses back with URL', () => {
    const uri = otpauthUri({ issuer: 'Edge Admin', account: 'alice@example.com' }, secret);
    expect(uri).toBe(
      'otpauth://totp/Edge%20Admin:alice%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Edge%20Admin&algorithm=SHA1&digits=6&period=30',
    );
    const url = new URL(uri);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname.slice(1))).toBe('Edge Admin:alice@example.com');
    expect(base32Decode(url.searchParams.get('secret')!)).toEqual(secret);
  });

  test('escapes characters that would end or split a field (& = ? # / + %, non-ASCII)', () => {
    const issuer = 'A&B=C?D#E/F+G%H É';
    const uri = otpauthUri({ issuer, account: 'bob' }, secret);
    const url = new URL(uri);
    expect(url.searchParams.get('issuer')).toBe(issuer);
    expect([...url.searchParams.keys()]).toEqual(['secret', 'issuer', 'algorithm', 'digits', 'period']);
    expect(url.hash).toBe('');
    expect(decodeURIComponent(url.pathname.slice(1))).toBe(`${issuer}:bob`);
    expect(uri).not.toMatch(/[ +É]/);
  });

  test('refuses a colon or an empty issuer/account', () => {
    expect(() => otpauthUri({ issuer: 'a:b', account: 'bob' }, secret)).toThrow('issuer');
    expect(() => otpauthUri({ issuer: 'App', account: 'b:ob' }, secret)).toThrow('account');
    expect(() => otpauthUri({ issuer: ' ', account: 'bob' }, secret)).toThrow('issuer');
  });
});
