import { describe, expect, test } from 'bun:test';
import { decode } from 'fast-png';
import { captchaPng, hslToRgb, rasterCaptcha } from '../src/modules/auth/captcha-raster.ts';
import { randomCaptchaText, renderCaptcha, type CaptchaScene } from '../src/modules/auth/captcha-render.ts';
import { mulberry32 } from './support/rng.ts';

// The PNG captcha (for the RuoYi dialect) is the SVG's own scene as pixels: the nonzero fill rule
// (the cancelled decoy glyphs must cancel, overlapping strokes must not make holes), the
// background and the ink gradient, and a PNG that decodes to that picture.

const square = (x: number, y: number, s: number, reverse = false) => {
  const pts = [x, y, x + s, y, x + s, y + s, x, y + s];
  if (!reverse) return pts;
  const out: number[] = [];
  for (let i = pts.length - 2; i >= 0; i -= 2) out.push(pts[i]!, pts[i + 1]!);
  return out;
};
const scene = (contours: number[][]): CaptchaScene => ({
  width: 20, height: 10, background: 'hsl(0,0%,100%)', stops: ['hsl(0,0%,0%)', 'hsl(0,0%,0%)', 'hsl(0,0%,0%)'], from: [0, 0], to: [20, 0], contours,
});
/** How dark a pixel of the 2× raster is, 0 (background) to 1 (ink). */
const ink = (r: ReturnType<typeof rasterCaptcha>, x: number, y: number) => 1 - r.data[(y * r.width + x) * 4]! / 255;

describe('captcha raster', () => {
  test('colours: hsl() to sRGB', () => {
    expect(hslToRgb('hsl(0,100%,50%)')).toEqual([255, 0, 0]);
    expect(hslToRgb('hsl(120,100%,25%)')).toEqual([0, 128, 0]);
    expect(hslToRgb('hsl(240,35%,95.5%)')).toEqual([240, 240, 248]);
    expect(() => hslToRgb('red')).toThrow();
  });

  test('nonzero fill: ink inside, none outside; a reversed copy cancels; overlaps stay filled', () => {
    const one = rasterCaptcha(scene([square(2, 2, 4)]));
    expect([one.width, one.height]).toEqual([40, 20]);
    expect(ink(one, 8, 8)).toBe(1);
    expect(ink(one, 30, 8)).toBe(0);
    const edge = rasterCaptcha(scene([square(2.25, 2, 4)]));
    expect(ink(edge, 4, 8)).toBeCloseTo(0.5, 2); // pixel 4 spans x 2..2.5: half of it is inside
    const cancelled = rasterCaptcha(scene([square(2, 2, 4), square(2, 2, 4, true)]));
    expect(ink(cancelled, 8, 8)).toBe(0);
    const overlap = rasterCaptcha(scene([square(2, 2, 4), square(4, 2, 4)]));
    expect(ink(overlap, 10, 8)).toBe(1); // even-odd would leave a hole here
  });

  test('a real captcha: the PNG decodes, the ink lies on the glyphs, and the cancelled decoys leave no trace', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const rng = mulberry32(seed);
      const { scene: sc, boxes } = renderCaptcha(randomCaptchaText(rng), rng);
      const png = decode(captchaPng(sc));
      expect([png.width, png.height, png.channels]).toEqual([sc.width * 2, sc.height * 2, 4]);
      const r = rasterCaptcha(sc);
      expect(Buffer.from(png.data as Uint8Array).equals(Buffer.from(r.data))).toBe(true);
      // Every glyph box holds ink; well outside all boxes there is little (the noise strokes).
      const inBox = (x: number, y: number) => boxes.some((b) => x >= b.minX - 1 && x <= b.maxX + 1 && y >= b.minY - 1 && y <= b.maxY + 1);
      for (const b of boxes) {
        let sum = 0, n = 0;
        for (let y = Math.floor(b.minY * 2); y < b.maxY * 2; y++) for (let x = Math.floor(b.minX * 2); x < b.maxX * 2; x++) (sum += ink(r, x, y)), n++;
        expect(sum / n).toBeGreaterThan(0.1);
      }
      let out = 0, outN = 0;
      for (let y = 0; y < r.height; y++) for (let x = 0; x < r.width; x++) if (!inBox(x / 2, y / 2)) (out += ink(r, x, y) > 0.5 ? 1 : 0), outN++;
      expect(out / Math.max(1, outN)).toBeLessThan(0.1);
      // The same scene without the cancelled pairs (what a browser shows of the SVG) is the same picture.
      const rng2 = mulberry32(seed);
      const plain = renderCaptcha(randomCaptchaText(rng2), rng2, { decoys: 'omit' }).scene;
      expect(plain.contours.length).toBeLessThan(sc.contours.length);
      const r2 = rasterCaptcha(plain);
      let diff = 0;
      for (let i = 0; i < r.data.length; i += 4) diff += Math.abs(r.data[i]! - r2.data[i]!) > 64 ? 1 : 0;
      expect(diff / (r.width * r.height)).toBeLessThan(0.01);
    }
  });
});
