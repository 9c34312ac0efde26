import { describe, expect, test } from 'bun:test';
import jsQR from 'jsqr';
import { qrModules, qrSvgDataUrl, type QrModules } from '../src/core/qr.ts';
import { otpauthUri } from '../src/core/totp.ts';

// The QR code must scan back to the exact URI. Two independent routes into jsQR (a maintained
// decoder, dev-only): lean-qr's module matrix, and the SVG we actually ship, filled pixel by pixel
// from its path the way a browser fills it (nonzero winding), so a bug in the SVG step, not only
// in the encoder, fails here too.
const PX = 4; // pixels per module

/** RGBA pixels: dark modules black, everything else (quiet zone included) white. */
function toRgba(width: number, height: number, dark: (x: number, y: number) => boolean): Uint8ClampedArray {
  const rgba = new Uint8ClampedArray(width * height * 4).fill(255);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      if (dark(x, y)) rgba.fill(0, (y * width + x) * 4, (y * width + x) * 4 + 3);
  return rgba;
}

function decodeMatrix(m: QrModules): string | null {
  const side = (m.size + 8) * PX;
  const rgba = toRgba(side, side, (x, y) => m.get(Math.floor(x / PX) - 4, Math.floor(y / PX) - 4));
  return jsQR(rgba, side, side, { inversionAttempts: 'dontInvert' })?.data ?? null;
}

/** The SVG's own picture: viewBox, white rect, and the path's M/L/Z outlines filled nonzero. */
function rasteriseSvg(svg: string): { width: number; height: number; rgba: Uint8ClampedArray } {
  const [vx, vy, vw, vh] = svg.match(/viewBox="([^"]+)"/)![1]!.split(' ').map(Number) as [number, number, number, number];
  const d = svg.match(/<path d="([^"]*)" fill="black"/)?.[1];
  if (d === undefined) throw new Error('no black path in the SVG');
  expect(svg).toContain(`<rect x="${vx}" y="${vy}" width="${vw}" height="${vh}" fill="white">`);
  // vertical edges only: [x, yFrom, yTo]
  const edges: [number, number, number][] = [];
  for (const sub of d.split('Z').filter(Boolean)) {
    const pts = [...sub.matchAll(/[ML](-?\d+) (-?\d+)/g)].map((m) => [Number(m[1]), Number(m[2])] as const);
    expect(pts.length * 2).toBe(sub.replace(/[ML]/g, ' ').trim().split(/\s+/).length); // every token parsed
    for (let i = 0; i < pts.length; i++) {
      const [x0, y0] = pts[i]!, [x1, y1] = pts[(i + 1) % pts.length]!;
      if (x0 === x1 && y0 !== y1) edges.push([x0, y0, y1]);
      else if (x0 !== x1 && y0 !== y1) throw new Error('a diagonal edge in a QR path');
    }
  }
  const width = vw * PX, height = vh * PX;
  const ink = new Uint8Array(width * height);
  for (let r = 0; r < height; r++) {
    const y = vy + (r + 0.5) / PX;
    const crossings = edges.filter(([, a, b]) => Math.min(a, b) < y && y < Math.max(a, b)).map(([x, a, b]) => [x, b > a ? 1 : -1] as const).sort((p, q) => p[0] - q[0]);
    let wind = 0, k = 0;
    for (let c = 0; c < width; c++) {
      const x = vx + (c + 0.5) / PX;
      while (k < crossings.length && crossings[k]![0] < x) wind += crossings[k++]![1];
      ink[r * width + c] = wind !== 0 ? 1 : 0;
    }
  }
  return { width, height, rgba: toRgba(width, height, (x, y) => ink[y * width + x] === 1) };
}

function decodeDataUrl(url: string): string | null {
  const prefix = 'data:image/svg+xml;base64,';
  expect(url.startsWith(prefix)).toBe(true);
  const { width, height, rgba } = rasteriseSvg(atob(url.slice(prefix.length)));
  return jsQR(rgba, width, height, { inversionAttempts: 'dontInvert' })?.data ?? null;
}

const secret = new TextEncoder().encode('12345678901234567890');
const cases: [string, string][] = [
  ['typical', otpauthUri({ issuer: 'Edge Admin', account: 'alice@example.com' }, secret)],
  ['escaped, non-ASCII, long', otpauthUri({ issuer: 'A&B=C?D#E/F+G%H É 管理', account: 'a.very-long_login.name@some.example.org' }, crypto.getRandomValues(new Uint8Array(20)))],
  ['short', otpauthUri({ issuer: 'x', account: 'y' }, secret)],
];
const uris = cases.map(([, uri]) => uri);

describe('QR code of the otpauth URI', () => {
  test.each(cases)('the module matrix decodes back to the URI (%s)', (_, uri) => {
    expect(decodeMatrix(qrModules(uri))).toBe(uri);
  });

  test.each(cases)('the SVG data URL, rasterised from its path, decodes back to the URI (%s)', (_, uri) => {
    expect(decodeDataUrl(qrSvgDataUrl(uri))).toBe(uri);
  });

  test('the SVG is self-contained: no script, no external reference, a quiet zone of 4 modules', () => {
    const svg = atob(qrSvgDataUrl(uris[0]!).split(',')[1]!);
    expect(svg).not.toMatch(/<script|href=|url\(|on\w+=/i);
    const m = qrModules(uris[0]!);
    expect(svg).toContain(`viewBox="-4 -4 ${m.size + 8} ${m.size + 8}"`);
    expect(svg).toContain(`width="${(m.size + 8) * 4}"`);
  });

  test('the decoder is not fooled: another text, or a damaged finder pattern, does not give the URI', () => {
    const m = qrModules(uris[0]!);
    expect(decodeMatrix(qrModules(`${uris[0]}x`))).toBe(`${uris[0]}x`);
    // blank out the top-left finder pattern: no longer a readable symbol
    const damaged: QrModules = { size: m.size, get: (x, y) => (x < 8 && y < 8 ? false : m.get(x, y)) };
    expect(decodeMatrix(damaged)).toBeNull();
  });
});
