import { beforeAll, describe, expect, test } from 'bun:test';
import {
  MAX_IMAGE_PIXELS,
  checkPixelFlood,
  imageDimensions,
  sniffImage,
} from '../src/modules/files/image-sniff.ts';
import { contentDisposition, fileExtension, sanitizeFileName } from '../src/modules/files/file-name.ts';
import { contentRange, etagMatches, parseRange } from '../src/modules/files/range.ts';
import { signLink, signedQuery, verifyLink } from '../src/core/signed-links.ts';
import { hmacKey } from '../src/core/keys.ts';
import {
  ascii,
  be32,
  be16,
  le16,
  le32,
  bytes,
  pngChunk,
  PNG_SIG,
  png,
  gif89,
  JFIF,
  DQT,
  DHT,
  sof,
  SOS,
  EOI,
  jpeg,
  riff,
  vp8,
  vp8l,
  vp8x,
} from './support/images.ts';

const enc = new TextEncoder();

// ---------- image sniffing ----------

describe('sniffImage', () => {
  test('recognizes each supported format by magic bytes', () => {
    expect(sniffImage(png(1, 1))).toEqual({ kind: 'png', contentType: 'image/png' });
    expect(sniffImage(jpeg(1, 1))).toEqual({ kind: 'jpeg', contentType: 'image/jpeg' });
    expect(sniffImage(gif89(1, 1))).toEqual({ kind: 'gif', contentType: 'image/gif' });
    expect(sniffImage(bytes(ascii('GIF87a'), le16(1), le16(1)))?.kind).toBe('gif');
    expect(sniffImage(vp8(1, 1))).toEqual({ kind: 'webp', contentType: 'image/webp' });
  });

  test('rejects HTML, SVG and other non-raster content regardless of name', () => {
    expect(sniffImage(enc.encode('<!DOCTYPE html><html><script>alert(1)</script>'))).toBeNull();
    const svg = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    expect(sniffImage(enc.encode(svg))).toBeNull();
    expect(sniffImage(enc.encode('%PDF-1.7'))).toBeNull();
    expect(sniffImage(bytes(ascii('RIFF'), le32(4), ascii('WAVE')))).toBeNull();
    expect(sniffImage(new Uint8Array(0))).toBeNull();
    expect(sniffImage(bytes([0x89, 0x50, 0x4e, 0x47]))).toBeNull(); // partial PNG signature
    expect(sniffImage(bytes([0xff, 0xd8]))).toBeNull();
    expect(sniffImage(enc.encode('GIF88a'))).toBeNull();
  });
});

describe('imageDimensions', () => {
  test('PNG IHDR', () => {
    expect(imageDimensions(png(640, 480), 'png')).toEqual({ width: 640, height: 480 });
    expect(imageDimensions(png(100000, 100000), 'png')).toEqual({ width: 100000, height: 100000 });
  });

  test('PNG truncated, zero-sized, wrong first chunk or >2^31 is null', () => {
    expect(imageDimensions(png(640, 480).subarray(0, 12), 'png')).toBeNull();
    expect(imageDimensions(png(640, 480).subarray(0, 23), 'png')).toBeNull();
    expect(imageDimensions(png(0, 480), 'png')).toBeNull();
    const notIhdr = bytes(PNG_SIG, pngChunk('IHDX', [...be32(1), ...be32(1), 8, 6, 0, 0, 0]));
    expect(imageDimensions(notIhdr, 'png')).toBeNull();
    expect(imageDimensions(bytes(PNG_SIG, pngChunk('IHDR', [...be32(0x80000000), ...be32(1), 8, 6, 0, 0, 0])), 'png')).toBeNull();
  });

  test('GIF logical screen', () => {
    expect(imageDimensions(gif89(320, 200), 'gif')).toEqual({ width: 320, height: 200 });
    expect(imageDimensions(gif89(320, 200).subarray(0, 9), 'gif')).toBeNull();
    expect(imageDimensions(gif89(0, 200), 'gif')).toBeNull();
  });

  test('JPEG walks past APP0/DQT/DHT to SOF0', () => {
    expect(imageDimensions(jpeg(1024, 768), 'jpeg')).toEqual({ width: 1024, height: 768 });
  });

  test('JPEG progressive SOF2 and other SOF variants', () => {
    expect(imageDimensions(jpeg(33, 44, 0xc2), 'jpeg')).toEqual({ width: 33, height: 44 });
    expect(imageDimensions(jpeg(5, 6, 0xcf), 'jpeg')).toEqual({ width: 5, height: 6 });
  });

  test('JPEG does not mistake DHT/JPG/DAC for SOF', () => {
    // A DAC segment whose payload would read as 0x0102 x 0x0304 if misparsed.
    const dac = [0xff, 0xcc, ...be16(8), 8, 0x03, 0x04, 0x01, 0x02, 0];
    const img = bytes([0xff, 0xd8], dac, sof(0xc0, 7, 9), EOI);
    expect(imageDimensions(img, 'jpeg')).toEqual({ width: 7, height: 9 });
    const jpgExt = [0xff, 0xc8, ...be16(8), 8, 0x03, 0x04, 0x01, 0x02, 0];
    expect(imageDimensions(bytes([0xff, 0xd8], jpgExt, sof(0xc1, 7, 9)), 'jpeg')).toEqual({ width: 7, height: 9 });
  });

  test('JPEG tolerates fill bytes and standalone markers', () => {
    const img = bytes([0xff, 0xd8], [0xff, 0xff, 0xff], JFIF, [0xff, 0xd0], [0xff, 0x01], [0xff, 0xff], sof(0xc0, 12, 34));
    expect(imageDimensions(img, 'jpeg')).toEqual({ width: 12, height: 34 });
  });

  test('JPEG truncated, corrupt, SOS-before-SOF or SOF outside head is null', () => {
    const full = jpeg(1024, 768);
    const sofAt = 2 + JFIF.length + DQT.length + DHT.length;
    expect(imageDimensions(full.subarray(0, sofAt + 6), 'jpeg')).toBeNull(); // cut inside SOF
    expect(imageDimensions(full.subarray(0, sofAt), 'jpeg')).toBeNull(); // SOF not in head
    expect(imageDimensions(full.subarray(0, 3), 'jpeg')).toBeNull();
    expect(imageDimensions(bytes([0xff, 0xd8], SOS, sof(0xc0, 1, 1)), 'jpeg')).toBeNull();
    expect(imageDimensions(bytes([0xff, 0xd8], EOI), 'jpeg')).toBeNull();
    expect(imageDimensions(bytes([0xff, 0xd8], [0x12, 0x34], sof(0xc0, 1, 1)), 'jpeg')).toBeNull(); // junk
    expect(imageDimensions(bytes([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01]), 'jpeg')).toBeNull(); // length < 2
    expect(imageDimensions(bytes([0xff, 0xd8], sof(0xc0, 10, 0)), 'jpeg')).toBeNull(); // DNL height
    expect(imageDimensions(bytes([0xff, 0xd8, 0xff, 0x00]), 'jpeg')).toBeNull();
  });

  test('JPEG SOF after large APP segments: found if inside head, null if past it', () => {
    const app1 = [0xff, 0xe1, ...be16(65000), ...new Array<number>(64998).fill(0)];
    const img = bytes([0xff, 0xd8], app1, app1, sof(0xc0, 4000, 3000));
    expect(imageDimensions(img, 'jpeg')).toEqual({ width: 4000, height: 3000 });
    expect(imageDimensions(img.subarray(0, 65536), 'jpeg')).toBeNull();
  });

  test('WebP VP8 lossy', () => {
    expect(imageDimensions(vp8(550, 368), 'webp')).toEqual({ width: 550, height: 368 });
    // Upscale bits in the top two bits are not part of the size.
    expect(imageDimensions(vp8(550 | 0xc000, 368 | 0x4000), 'webp')).toEqual({ width: 550, height: 368 });
    expect(imageDimensions(vp8(550, 368, 0x11), 'webp')).toBeNull(); // interframe
    const badStart = vp8(1, 1);
    badStart[23] = 0x00;
    expect(imageDimensions(badStart, 'webp')).toBeNull();
    expect(imageDimensions(vp8(550, 368).subarray(0, 29), 'webp')).toBeNull();
  });

  test('WebP VP8L lossless', () => {
    expect(imageDimensions(vp8l(400, 301), 'webp')).toEqual({ width: 400, height: 301 });
    expect(imageDimensions(vp8l(16384, 16384), 'webp')).toEqual({ width: 16384, height: 16384 });
    expect(imageDimensions(vp8l(1, 1), 'webp')).toEqual({ width: 1, height: 1 });
    expect(imageDimensions(vp8l(10, 10, 1), 'webp')).toBeNull(); // unknown version
    const badSig = vp8l(10, 10);
    badSig[20] = 0x2e;
    expect(imageDimensions(badSig, 'webp')).toBeNull();
  });

  test('WebP VP8X extended', () => {
    expect(imageDimensions(vp8x(1920, 1080), 'webp')).toEqual({ width: 1920, height: 1080 });
    expect(imageDimensions(vp8x(1 << 24, 1), 'webp')).toEqual({ width: 1 << 24, height: 1 });
    expect(imageDimensions(vp8x(1920, 1080).subarray(0, 29), 'webp')).toBeNull();
    expect(imageDimensions(riff('ALPH', new Array<number>(16).fill(0)), 'webp')).toBeNull();
  });

  test('kind mismatch yields null instead of garbage', () => {
    expect(imageDimensions(png(10, 10), 'jpeg')).toBeNull();
    expect(imageDimensions(jpeg(10, 10), 'png')).toBeNull();
    expect(imageDimensions(gif89(10, 10), 'webp')).toBeNull();
  });
});

describe('checkPixelFlood', () => {
  test('refuses oversized images', () => {
    expect(MAX_IMAGE_PIXELS).toBe(50_000_000);
    expect(checkPixelFlood(100000, 100000)).toBe(false);
    expect(checkPixelFlood(20001, 10)).toBe(false);
    expect(checkPixelFlood(10, 20001)).toBe(false);
    expect(checkPixelFlood(10000, 5001)).toBe(false); // 50,010,000 px
    expect(checkPixelFlood(0, 10)).toBe(false);
    expect(checkPixelFlood(Number.NaN, 10)).toBe(false);
    expect(checkPixelFlood(1.5, 10)).toBe(false);
  });
  test('accepts normal images and respects custom maxSide', () => {
    expect(checkPixelFlood(4000, 3000)).toBe(true);
    expect(checkPixelFlood(10000, 5000)).toBe(true);
    expect(checkPixelFlood(20000, 1)).toBe(true);
    expect(checkPixelFlood(5000, 10, 4096)).toBe(false);
  });
});

// ---------- file names ----------

const cpLen = (s: string) => Array.from(s).length;

describe('sanitizeFileName', () => {
  test('keeps only the last path segment', () => {
    expect(sanitizeFileName('../../x')).toBe('x');
    expect(sanitizeFileName('/etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('C:\\Windows\\system32\\cmd.exe')).toBe('cmd.exe');
    expect(sanitizeFileName('..\\..\\boot.ini')).toBe('boot.ini');
    expect(sanitizeFileName('dir/')).toBe('file');
  });

  test('Windows reserved device names get an underscore', () => {
    expect(sanitizeFileName('CON')).toBe('_CON');
    expect(sanitizeFileName('con.txt')).toBe('_con.txt');
    expect(sanitizeFileName('nul.tar.gz')).toBe('_nul.tar.gz');
    expect(sanitizeFileName('Com1.log')).toBe('_Com1.log');
    expect(sanitizeFileName('lpt9')).toBe('_lpt9');
    expect(sanitizeFileName('CON .txt')).toBe('_CON .txt');
    expect(sanitizeFileName('console.txt')).toBe('console.txt');
    expect(sanitizeFileName('COM0')).toBe('COM0');
    expect(sanitizeFileName('CON', 3)).toBe('_CO');
  });

  test('caps length in code points and keeps the extension', () => {
    const out = sanitizeFileName('a'.repeat(300) + '.pdf');
    expect(out.length).toBeLessThanOrEqual(200);
    expect(out).toBe('a'.repeat(196) + '.pdf');
    expect(sanitizeFileName('b'.repeat(50) + '.txt', 20)).toBe('b'.repeat(16) + '.txt');
    // Unusual "extension" is not preserved specially, just cut.
    expect(sanitizeFileName('c'.repeat(50) + '.not an ext', 20)).toBe('c'.repeat(20));
  });

  test('never splits surrogate pairs or emoji when cutting', () => {
    const out = sanitizeFileName('😀'.repeat(300) + '.png', 50);
    expect(cpLen(out)).toBe(50);
    expect(out.endsWith('.png')).toBe(true);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(out.startsWith('😀😀')).toBe(true);
    const fam = sanitizeFileName('👨‍👩‍👧'.repeat(10) + '.jpg', 10);
    expect(fam).toBe('👨‍👩‍👧.jpg'); // the next 5-code-point family would not fit whole
  });

  test('strips bidi overrides so the real extension stays visible', () => {
    expect(sanitizeFileName('invoice\u202Egpj.exe')).toBe('invoicegpj.exe');
    expect(sanitizeFileName('a\u2066b\u2069c\u200Ed\u200Fe\u061Cf.txt')).toBe('abcdef.txt');
  });

  test('strips NUL, control and zero-width characters', () => {
    expect(sanitizeFileName('evil\u0000.php.jpg')).toBe('evil.php.jpg');
    expect(sanitizeFileName('a\r\nb\tc\u007f\u0085\u009fd.txt')).toBe('abcd.txt');
    expect(sanitizeFileName('pay\u200Bpal\uFEFF.pdf')).toBe('paypal.pdf');
    expect(sanitizeFileName('a\u200Db.txt')).toBe('ab.txt');
    expect(sanitizeFileName('x\ud800y.txt')).toBe('xy.txt'); // lone surrogate
  });

  test('dot and whitespace edge cases', () => {
    expect(sanitizeFileName('..')).toBe('file');
    expect(sanitizeFileName('.')).toBe('file');
    expect(sanitizeFileName('   ')).toBe('file');
    expect(sanitizeFileName('')).toBe('file');
    expect(sanitizeFileName(' . . ')).toBe('file');
    expect(sanitizeFileName('  report.pdf. . ')).toBe('report.pdf');
    expect(sanitizeFileName('a..b...c.txt')).toBe('a.b.c.txt');
    expect(sanitizeFileName('.htaccess')).toBe('htaccess');
    expect(sanitizeFileName('\u3000全角.txt\u00a0')).toBe('全角.txt');
  });

  test('emoji and non-Latin names survive, NFC-normalized', () => {
    expect(sanitizeFileName('🎉 party 🎂.png')).toBe('🎉 party 🎂.png');
    expect(sanitizeFileName('👨‍👩‍👧 family.jpg')).toBe('👨‍👩‍👧 family.jpg');
    expect(sanitizeFileName('报告 2026.pdf')).toBe('报告 2026.pdf');
    const decomposed = 'Cafe\u0301.txt';
    expect(sanitizeFileName(decomposed)).toBe('Caf\u00e9.txt');
    // Composition after stripping an invisible char in between.
    expect(sanitizeFileName('e\u200B\u0301.txt')).toBe('\u00e9.txt');
  });
});

describe('fileExtension', () => {
  test('extracts lowercase safe extensions only', () => {
    expect(fileExtension('photo.JPG')).toBe('jpg');
    expect(fileExtension('archive.tar.gz')).toBe('gz');
    expect(fileExtension('noext')).toBe('');
    expect(fileExtension('.env')).toBe('');
    expect(fileExtension('trailing.')).toBe('');
    expect(fileExtension('x.ph p')).toBe('');
    expect(fileExtension('x.' + 'a'.repeat(17))).toBe('');
    expect(fileExtension('x.' + 'a'.repeat(16))).toBe('a'.repeat(16));
    expect(fileExtension('x.jpé')).toBe('');
    expect(fileExtension('dir.d/file')).toBe('');
  });
});

describe('contentDisposition', () => {
  test('ASCII name', () => {
    expect(contentDisposition('attachment', 'report.pdf')).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
  });
  test('non-ASCII name gets fallback and RFC 5987 encoding', () => {
    const v = contentDisposition('attachment', '报告 2026.pdf');
    expect(v).toBe(`attachment; filename="__ 2026.pdf"; filename*=UTF-8''%E6%8A%A5%E5%91%8A%202026.pdf`);
    expect(decodeURIComponent(v.split("UTF-8''")[1] ?? '')).toBe('报告 2026.pdf');
  });
  test('quotes, backslashes, percent and header-breaking characters are neutralized', () => {
    const v = contentDisposition('inline', 'a"b\\c%d\r\nX-Evil: 1;\'()*.txt');
    expect(v.startsWith('inline; filename="a_b_c_d__X-Evil: 1;\'()*.txt"; ')).toBe(true);
    expect(v).toContain(`filename*=UTF-8''a%22b%5Cc%25d%0D%0AX-Evil%3A%201%3B%27%28%29%2A.txt`);
    expect(v).not.toMatch(/[\r\n]/);
  });
  test('emoji is one fallback char and 4 encoded bytes; attr-chars stay literal', () => {
    expect(contentDisposition('inline', '😀!#$&+-.^_`|~')).toBe(
      `inline; filename="_!#$&+-.^_\`|~"; filename*=UTF-8''%F0%9F%98%80!#$&+-.^_\`|~`,
    );
  });
});

// ---------- ranges / etags ----------

describe('parseRange', () => {
  test('absent or malformed headers mean full', () => {
    expect(parseRange(null, 100)).toEqual({ kind: 'full' });
    expect(parseRange(undefined, 100)).toEqual({ kind: 'full' });
    expect(parseRange('', 100)).toEqual({ kind: 'full' });
    expect(parseRange('items=0-1', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=abc', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=-', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=1-2-3', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=+1-2', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes 0-1', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=10-5', 100)).toEqual({ kind: 'full' });
  });
  test('multiple ranges are ignored', () => {
    expect(parseRange('bytes=0-1,5-9', 100)).toEqual({ kind: 'full' });
    expect(parseRange('bytes=0-1, 2-3', 100)).toEqual({ kind: 'full' });
  });
  test('single ranges', () => {
    expect(parseRange('bytes=0-0', 100)).toEqual({ kind: 'partial', start: 0, end: 0 });
    expect(parseRange('bytes=-5', 100)).toEqual({ kind: 'partial', start: 95, end: 99 });
    expect(parseRange('bytes=5-', 100)).toEqual({ kind: 'partial', start: 5, end: 99 });
    expect(parseRange('bytes=10-19', 100)).toEqual({ kind: 'partial', start: 10, end: 19 });
    expect(parseRange('BYTES=1-2', 100)).toEqual({ kind: 'partial', start: 1, end: 2 });
    expect(parseRange(' bytes= 3-4 ', 100)).toEqual({ kind: 'partial', start: 3, end: 4 });
  });
  test('clamping', () => {
    expect(parseRange('bytes=90-1000', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-500', 100)).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('bytes=0-99999999999999999999999', 100)).toEqual({ kind: 'partial', start: 0, end: 99 });
  });
  test('unsatisfiable', () => {
    expect(parseRange('bytes=100-', 50)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=50-60', 50)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 50)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=0-0', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=99999999999999999999-', 50)).toEqual({ kind: 'unsatisfiable' });
  });
  test('invalid size is a programming error', () => {
    expect(() => parseRange('bytes=0-1', -1)).toThrow();
    expect(() => parseRange('bytes=0-1', Number.NaN)).toThrow();
  });
  test('contentRange', () => {
    expect(contentRange(parseRange('bytes=0-9', 100), 100)).toBe('bytes 0-9/100');
    expect(contentRange(parseRange('bytes=200-', 100), 100)).toBe('bytes */100');
    expect(contentRange(parseRange(null, 100), 100)).toBeNull();
  });
});

describe('etagMatches', () => {
  test('exact, weak and wildcard', () => {
    expect(etagMatches('"abc"', '"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"abc"', 'W/"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"abd"', '"abc"')).toBe(false);
    expect(etagMatches('"ABC"', '"abc"')).toBe(false);
  });
  test('lists, including commas inside tags and malformed members', () => {
    expect(etagMatches('"x", W/"y" ,"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"a,b", "c"', '"a,b"')).toBe(true);
    expect(etagMatches('"a,b", "c"', '"a"')).toBe(false);
    expect(etagMatches('bogus, "abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x", "y"', '"abc"')).toBe(false);
    expect(etagMatches('"unterminated', '"unterminated"')).toBe(false);
  });
  test('empty or missing header never matches; bare etag argument accepted', () => {
    expect(etagMatches(null, '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
    expect(etagMatches('   ', '"abc"')).toBe(false);
    expect(etagMatches('"abc"', 'abc')).toBe(true);
  });
});

// ---------- signed links ----------

describe('signed links', () => {
  let secret: CryptoKey;
  let other: CryptoKey;
  beforeAll(async () => {
    secret = await hmacKey(enc.encode('0123456789abcdef0123456789abcdef-test-secret'));
    other = await hmacKey(enc.encode('fedcba9876543210fedcba9876543210-other-secret'));
  });
  const now = 1_800_000_000;
  const exp = now + 300;
  const S = '3f1c2a9e-8d4b-4f6a-9b2e-7c5d1e0a4b3c';
  const OTHER_SESSION = '3f1c2a9e-8d4b-4f6a-9b2e-7c5d1e0a4b3d';

  test('sign produces a canonical 43-char base64url signature, deterministic', async () => {
    const a = await signLink(secret, 'download', 42, S, exp);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await signLink(secret, 'download', 42, S, exp)).toBe(a);
  });

  test('valid link verifies', async () => {
    const sig = await signLink(secret, 'preview', 7, S, exp);
    expect(await verifyLink(secret, 'preview', 7, S, exp, sig, now)).toBe('ok');
    expect(await verifyLink(secret, 'preview', 7, S, exp, sig, exp)).toBe('ok'); // inclusive
  });

  test('tampering is detected', async () => {
    const sig = await signLink(secret, 'preview', 7, S, exp);
    expect(await verifyLink(secret, 'preview', 8, S, exp, sig, now)).toBe('invalid');
    expect(await verifyLink(secret, 'download', 7, S, exp, sig, now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', 7, S, exp + 1, sig, now)).toBe('invalid');
    // Another session (the link names the session that got it).
    expect(await verifyLink(secret, 'preview', 7, OTHER_SESSION, exp, sig, now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', 7, `${S}:1`, exp, sig, now)).toBe('invalid');
    expect(await verifyLink(other, 'preview', 7, S, exp, sig, now)).toBe('invalid');
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    expect(await verifyLink(secret, 'preview', 7, S, exp, flipped, now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', 7, S, exp, sig.slice(0, -1), now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', 7, S, exp, sig + '=', now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', 7, S, exp, '', now)).toBe('invalid');
    expect(await verifyLink(secret, 'preview', Number.NaN, S, exp, sig, now)).toBe('invalid');
    expect(await verifyLink(secret, 'upload' as 'preview', 7, S, exp, sig, now)).toBe('invalid');
  });

  test('non-canonical base64url alias of a valid signature is rejected', async () => {
    const sig = await signLink(secret, 'download', 1, S, exp);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(sig[42] ?? '');
    const alias = sig.slice(0, 42) + alphabet[last | 1];
    expect(alias).not.toBe(sig);
    expect(await verifyLink(secret, 'download', 1, S, exp, alias, now)).toBe('invalid');
  });

  test('expired links (only after the signature checks out)', async () => {
    const sig = await signLink(secret, 'download', 1, S, exp);
    expect(await verifyLink(secret, 'download', 1, S, exp, sig, exp + 1)).toBe('expired');
    expect(await verifyLink(secret, 'download', 1, S, exp, sig, Number.NaN)).toBe('expired');
    const forged = 'A'.repeat(43);
    expect(await verifyLink(secret, 'download', 1, S, exp, forged, exp + 1)).toBe('invalid');
  });

  test('signedQuery round-trips through URLSearchParams', async () => {
    const q = await signedQuery(secret, 'download', 99, S, 600, now + 0.7);
    const p = new URLSearchParams(q);
    expect(p.get('id')).toBe('99');
    expect(p.get('exp')).toBe(String(now + 600));
    expect(p.get('s')).toBe(S);
    expect(q).toBe(`id=99&exp=${now + 600}&s=${S}&sig=${p.get('sig')}`);
    const res = await verifyLink(secret, 'download', Number(p.get('id')), S, Number(p.get('exp')), p.get('sig') ?? '', now);
    expect(res).toBe('ok');
    expect(await verifyLink(secret, 'preview', 99, S, Number(p.get('exp')), p.get('sig') ?? '', now)).toBe('invalid');
  });

  test('bad inputs to signing are rejected loudly', async () => {
    await expect(hmacKey(new Uint8Array(8))).rejects.toThrow();
    await expect(signLink(secret, 'download', -1, S, exp)).rejects.toThrow();
    await expect(signLink(secret, 'download', 1.5, S, exp)).rejects.toThrow();
    await expect(signLink(secret, 'download', 1, 'a:b', exp)).rejects.toThrow();
    await expect(signLink(secret, 'download', 1, '', exp)).rejects.toThrow();
    await expect(signedQuery(secret, 'download', 1, S, 0, now)).rejects.toThrow();
  });
});
