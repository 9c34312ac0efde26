// Captcha readability, measured where people see it: many captchas rendered by Chromium, checked
// for legibility (glyphs inside the canvas, apart from each other, dark against the background and
// darker than the noise), plus proof that a naive path-matching decoder reads none of them.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { CAPTCHA_ALPHABET, randomCaptchaText, renderCaptchaSvg, type Rng } from '../../src/modules/auth/captcha-render.ts';
import { hasChromium, launchChromium, noteSkip } from './support.ts';
import { mulberry32 } from '../support/rng.ts';

noteSkip('test/browser/captcha-legibility.test.ts');

const COUNT = 50;
/** Pixel scale for rasterising: enough resolution to measure ink, still fast. */
const SCALE = 3;
/** WCAG AA for text: glyph fill against the background. */
const MIN_CONTRAST_BACKGROUND = 4.5;
/** Every noise colour must be clearly lighter than every glyph of the same captcha. */
const MIN_CONTRAST_NOISE = 1.8;
/** Bounding boxes of two glyphs may share at most this fraction of the smaller one. */
const MAX_OVERLAP = 0.1;
/** Relative luminance below which a pixel counts as glyph ink. */
const DARK = 0.13;


const samples = Array.from({ length: COUNT }, (_, i) => {
  const rng = mulberry32(1000 + i);
  const text = randomCaptchaText(rng);
  return { seed: 1000 + i, text, svg: renderCaptchaSvg(text, rng) };
});

interface Measured {
  natural: [number, number];
  size: [number, number];
  background: string;
  glyphs: Array<{ x: number; y: number; w: number; h: number; fill: string; d: string; ink: number }>;
  noise: string[];
  darkOutsideGlyphs: number;
  darkTotal: number;
}

/** Runs in the page: inline SVG for geometry and computed colours, a canvas for the pixels. */
async function measure(page: Page, svgs: string[], scale: number, dark: number): Promise<Measured[]> {
  return page.evaluate(
    async ({ svgs, scale, dark }) => {
      const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      const lumOf = (r: number, g: number, b: number) => 0.2126 * lin(r / 255) + 0.7152 * lin(g / 255) + 0.0722 * lin(b / 255);
      const out = [];
      for (const svg of svgs) {
        const holder = document.createElement('div');
        holder.innerHTML = svg;
        document.body.append(holder);
        const root = holder.querySelector('svg')!;
        const W = root.width.baseVal.value, H = root.height.baseVal.value;
        const img = new Image();
        img.src = 'data:image/svg+xml;base64,' + btoa(svg);
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = W * scale;
        canvas.height = H * scale;
        const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
        ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
        const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
        const isDark = (x: number, y: number) => {
          const i = (y * canvas.width + x) * 4;
          return lumOf(px[i]!, px[i + 1]!, px[i + 2]!) < dark;
        };
        const glyphs = [...root.querySelectorAll<SVGPathElement>('path.g')].map((p) => {
          const b = p.getBBox();
          let ink = 0, area = 0;
          for (let y = Math.floor(b.y * scale); y < Math.ceil((b.y + b.height) * scale); y++) {
            for (let x = Math.floor(b.x * scale); x < Math.ceil((b.x + b.width) * scale); x++) {
              area++;
              if (isDark(x, y)) ink++;
            }
          }
          return { x: b.x, y: b.y, w: b.width, h: b.height, fill: getComputedStyle(p).fill, d: p.getAttribute('d')!, ink: ink / area };
        });
        // Ink outside every glyph box (1 unit of slack for anti-aliasing) would be noise posing as glyphs.
        let darkTotal = 0, darkOutsideGlyphs = 0;
        for (let y = 0; y < canvas.height; y++) {
          for (let x = 0; x < canvas.width; x++) {
            if (!isDark(x, y)) continue;
            darkTotal++;
            const ux = x / scale, uy = y / scale;
            if (!glyphs.some((g) => ux >= g.x - 1 && ux <= g.x + g.w + 1 && uy >= g.y - 1 && uy <= g.y + g.h + 1)) darkOutsideGlyphs++;
          }
        }
        out.push({
          natural: [img.naturalWidth, img.naturalHeight] as [number, number],
          size: [W, H] as [number, number],
          background: getComputedStyle(root.querySelector('rect')!).fill,
          glyphs,
          noise: [...root.querySelectorAll<SVGPathElement>('path.n')].map((p) => getComputedStyle(p).stroke),
          darkOutsideGlyphs,
          darkTotal,
        });
        holder.remove();
      }
      return out;
    },
    { svgs, scale, dark },
  );
}

/** WCAG relative luminance of a computed CSS colour `rgb(r, g, b)`. */
function luminance(css: string): number {
  const m = css.match(/rgba?\((\d+(?:\.\d+)?),\s*(\d+(?:\.\d+)?),\s*(\d+(?:\.\d+)?)/);
  if (!m) throw new Error(`unexpected computed colour ${css}`);
  const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return 0.2126 * lin(Number(m[1]) / 255) + 0.7152 * lin(Number(m[2]) / 255) + 0.0722 * lin(Number(m[3]) / 255);
}
const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
let measured: Measured[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  const page = await browser.context.newPage();
  await page.setContent('<!doctype html><body></body>');
  measured = await measure(page, samples.map((s) => s.svg), SCALE, DARK);
}, 30_000);

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)(`captcha legibility over ${COUNT} captchas in Chromium`, () => {
  test('each is a 120x40 image with one glyph per character, all inside the canvas', () => {
    measured.forEach((m, i) => {
      const { text, seed } = samples[i]!;
      expect({ seed, natural: m.natural }).toEqual({ seed, natural: [120, 40] });
      expect(m.glyphs).toHaveLength(text.length);
      for (const g of m.glyphs) {
        expect(g.x).toBeGreaterThanOrEqual(0);
        expect(g.y).toBeGreaterThanOrEqual(0);
        expect(g.x + g.w).toBeLessThanOrEqual(m.size[0]);
        expect(g.y + g.h).toBeLessThanOrEqual(m.size[1]);
        // Big enough to read: at least 40 % of the height.
        expect(g.h).toBeGreaterThan(0.4 * m.size[1]);
      }
    });
  });

  test(`no two glyphs overlap by more than ${MAX_OVERLAP * 100} % of the smaller box`, () => {
    let worst = 0;
    for (const m of measured) {
      for (let a = 0; a < m.glyphs.length; a++) {
        for (let b = a + 1; b < m.glyphs.length; b++) {
          const p = m.glyphs[a]!, q = m.glyphs[b]!;
          const w = Math.max(0, Math.min(p.x + p.w, q.x + q.w) - Math.max(p.x, q.x));
          const h = Math.max(0, Math.min(p.y + p.h, q.y + q.h) - Math.max(p.y, q.y));
          worst = Math.max(worst, (w * h) / Math.min(p.w * p.h, q.w * q.h));
        }
      }
    }
    expect(worst).toBeLessThanOrEqual(MAX_OVERLAP);
  });

  test('glyphs contrast with the background and are darker than all noise', () => {
    const failures: string[] = [];
    measured.forEach((m, i) => {
      const bg = luminance(m.background);
      const darkestNoise = Math.min(...m.noise.map(luminance));
      for (const g of m.glyphs) {
        const y = luminance(g.fill);
        const vsBg = contrast(y, bg);
        const vsNoise = (darkestNoise + 0.05) / (y + 0.05);
        if (vsBg < MIN_CONTRAST_BACKGROUND) failures.push(`seed ${samples[i]!.seed}: glyph ${g.fill} vs background ${m.background} = ${vsBg.toFixed(2)}:1`);
        if (vsNoise < MIN_CONTRAST_NOISE) failures.push(`seed ${samples[i]!.seed}: glyph ${g.fill} vs noise = ${vsNoise.toFixed(2)}:1`);
      }
    });
    expect(failures).toEqual([]);
  });

  test('on the rendered pixels, the dark ink is the glyphs: every glyph is inked, the noise is not dark', () => {
    measured.forEach((m, i) => {
      const seed = samples[i]!.seed;
      // Stroke outlines fill a good part of each glyph's box; over-noise must not wash them out.
      for (const g of m.glyphs) expect({ seed, inked: g.ink > 0.12 }).toEqual({ seed, inked: true });
      expect({ seed, strayInk: m.darkOutsideGlyphs / m.darkTotal < 0.01 }).toEqual({ seed, strayInk: true });
    });
  });

  test('a naive decoder (a table of glyph path data) reads none of them', () => {
    // Translation-free, integer-rounded path shape: as forgiving as a lookup table can be.
    const shape = (d: string) => {
      const n = (d.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
      return n.map((v, k) => Math.round(v - n[k % 2]!)).join(',');
    };
    const table = new Map<string, string>();
    const rng = mulberry32(7);
    for (let r = 0; r < 20; r++) {
      for (const ch of CAPTCHA_ALPHABET) {
        const svg = renderCaptchaSvg(ch.repeat(4), rng);
        for (const m of svg.matchAll(/<path class="g" d="([^"]+)"/g)) table.set(shape(m[1]!), ch);
      }
    }
    let hits = 0, solved = 0;
    measured.forEach((m, i) => {
      const read = m.glyphs.map((g) => table.get(shape(g.d)) ?? '?').join('');
      hits += [...read].filter((c) => c !== '?').length;
      if (read === samples[i]!.text) solved++;
      // The same character twice in one captcha never has the same path data either.
      const byChar = new Map<string, Set<string>>();
      m.glyphs.forEach((g, k) => {
        const ch = samples[i]!.text[k]!;
        const seen = byChar.get(ch) ?? new Set<string>();
        expect(seen.has(g.d)).toBe(false);
        seen.add(g.d);
        byChar.set(ch, seen);
      });
    });
    expect(table.size).toBe(20 * 4 * CAPTCHA_ALPHABET.length);
    expect({ hits, solved }).toEqual({ hits: 0, solved: 0 });
  });
});
