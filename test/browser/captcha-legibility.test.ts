// Captcha readability, measured where people see it: many captchas rendered by Chromium, checked
// for legibility (glyphs inside the canvas, apart from each other, dark against the background, the
// ink where the glyphs are). The glyph boxes come from the renderer (the markup no longer tells
// glyphs apart); 20 of them are written to test-output/captcha-samples.png for a person to look at.
// That a program cannot read them from the markup is test/captcha-attack.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { CAPTCHA_HEIGHT, CAPTCHA_WIDTH, randomCaptchaText, renderCaptcha, type GlyphBox } from '../../src/modules/auth/captcha-render.ts';
import { hasChromium, launchChromium, inChromium, outputPath } from './support.ts';
import { mulberry32 } from '../support/rng.ts';

const COUNT = 50;
/** Pixel scale for rasterising: enough resolution to measure ink, still fast. */
const SCALE = 3;
/** WCAG AA for text: glyph fill against the background. */
const MIN_CONTRAST_BACKGROUND = 4.5;
/** At most this share of the dark ink may lie outside every glyph box (measured: at most ~0.2 over 50). */
const MAX_STRAY_INK = 0.3;
/**
 * Bounding boxes of two glyphs may share at most this fraction of the smaller one. Neighbours are
 * set closer than their boxes on purpose (touching glyphs are what defeats cutting the picture into
 * glyphs), and a slanted glyph's box is loose, so the boxes overlap more than the ink does.
 */
const MAX_OVERLAP = 0.35;
/** Relative luminance below which a pixel counts as glyph ink. */
const DARK = 0.13;


const samples = Array.from({ length: COUNT }, (_, i) => {
  const rng = mulberry32(1000 + i);
  const text = randomCaptchaText(rng);
  return { seed: 1000 + i, text, ...renderCaptcha(text, rng) };
});
/** The same captchas without the cancelled glyph pairs, and with only their cancelling copies left out. */
const variant = (seed: number, decoys: 'omit' | 'show') => {
  const rng = mulberry32(seed);
  return renderCaptcha(randomCaptchaText(rng), rng, { decoys }).svg;
};

interface Measured {
  natural: [number, number];
  size: [number, number];
  background: string;
  stops: string[];
  paths: number;
  ink: number[];
  darkOutsideGlyphs: number;
  darkTotal: number;
}

/** Runs in the page: inline SVG for computed colours, a canvas for the pixels. */
async function measure(page: Page, items: { svg: string; boxes: GlyphBox[] }[], scale: number, dark: number): Promise<Measured[]> {
  return page.evaluate(
    async ({ items, scale, dark }) => {
      const lin = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      const lumOf = (r: number, g: number, b: number) => 0.2126 * lin(r / 255) + 0.7152 * lin(g / 255) + 0.0722 * lin(b / 255);
      const out = [];
      for (const { svg, boxes } of items) {
        const holder = document.createElement('div');
        holder.innerHTML = svg;
        document.body.append(holder);
        const root = holder.querySelector('svg')!;
        // Layout units (the viewBox): what the glyph boxes are given in.
        const W = root.viewBox.baseVal.width, H = root.viewBox.baseVal.height;
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
        const ink = boxes.map((b) => {
          let n = 0, area = 0;
          for (let y = Math.floor(b.minY * scale); y < Math.ceil(b.maxY * scale); y++) {
            for (let x = Math.floor(b.minX * scale); x < Math.ceil(b.maxX * scale); x++) {
              area++;
              if (isDark(x, y)) n++;
            }
          }
          return n / area;
        });
        let darkTotal = 0, darkOutsideGlyphs = 0;
        for (let y = 0; y < canvas.height; y++) {
          for (let x = 0; x < canvas.width; x++) {
            if (!isDark(x, y)) continue;
            darkTotal++;
            const ux = x / scale, uy = y / scale;
            if (!boxes.some((g) => ux >= g.minX - 1 && ux <= g.maxX + 1 && uy >= g.minY - 1 && uy <= g.maxY + 1)) darkOutsideGlyphs++;
          }
        }
        out.push({
          natural: [img.naturalWidth, img.naturalHeight] as [number, number],
          size: [W, H] as [number, number],
          background: getComputedStyle(root.querySelector('rect')!).fill,
          stops: [...root.querySelectorAll('stop')].map((st) => getComputedStyle(st).stopColor),
          paths: root.querySelectorAll('path').length,
          ink,
          darkOutsideGlyphs,
          darkTotal,
        });
        holder.remove();
      }
      return out;
    },
    { items, scale, dark },
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

/** Pixels (at 1x, as shown: the natural size) whose colour differs by more than 16/255 between two SVGs. */
async function pixelDiffs(page: Page, pairs: [string, string][]): Promise<number[]> {
  return page.evaluate(async (pairs) => {
    const draw = async (svg: string) => {
      const img = new Image();
      img.src = 'data:image/svg+xml;base64,' + btoa(svg);
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
      ctx.drawImage(img, 0, 0);
      return ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    };
    const out = [];
    for (const [a, b] of pairs) {
      const p = await draw(a), q = await draw(b);
      let n = 0;
      for (let i = 0; i < p.length; i += 4) if (Math.max(Math.abs(p[i]! - q[i]!), Math.abs(p[i + 1]! - q[i + 1]!), Math.abs(p[i + 2]! - q[i + 2]!)) > 16) n++;
      out.push(n);
    }
    return out;
  }, pairs);
}

let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
let measured: Measured[] = [];
let cancelledDiffs: number[] = [];
let shownDiffs: number[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  browser = await launchChromium();
  const page = await browser.context.newPage();
  await page.setContent('<!doctype html><body></body>');
  measured = await measure(page, samples.map(({ svg, boxes }) => ({ svg, boxes })), SCALE, DARK);
  cancelledDiffs = await pixelDiffs(page, samples.map(({ seed, svg }) => [svg, variant(seed, 'omit')]));
  shownDiffs = await pixelDiffs(page, samples.map(({ seed }) => [variant(seed, 'show'), variant(seed, 'omit')]));
  // A sheet of 20 at their natural size for a person to look at (test-output/captcha-samples.png).
  await page.setContent(
    `<body style="margin:0;background:#fff;font:14px monospace">${samples
      .slice(0, 20)
      .map((x) => `<div style="display:inline-block;margin:4px;text-align:center"><img src="data:image/svg+xml;base64,${btoa(x.svg)}"><br>${x.text}</div>`)
      .join('')}</body>`,
  );
  await page.screenshot({ path: outputPath('captcha-samples.png'), fullPage: true });
}, 120_000); // 50 rasterisations: seconds alone, much more on a loaded machine

afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!hasChromium)(inChromium(`captcha legibility over ${COUNT} captchas in Chromium`), () => {
  test(`each is a ${CAPTCHA_WIDTH}x${CAPTCHA_HEIGHT} image of one path, every glyph inside the canvas and big enough`, () => {
    measured.forEach((m, i) => {
      const { seed, boxes, text } = samples[i]!;
      expect({ seed, natural: m.natural, paths: m.paths }).toEqual({ seed, natural: [CAPTCHA_WIDTH, CAPTCHA_HEIGHT], paths: 1 });
      expect(boxes).toHaveLength(text.length);
      for (const g of boxes) {
        expect(g.minX).toBeGreaterThanOrEqual(0);
        expect(g.minY).toBeGreaterThanOrEqual(0);
        expect(g.maxX).toBeLessThanOrEqual(m.size[0]);
        expect(g.maxY).toBeLessThanOrEqual(m.size[1]);
        // Big enough to read: at least 40 % of the height.
        expect(g.maxY - g.minY).toBeGreaterThan(0.4 * m.size[1]);
      }
    });
  });

  test(`no two glyphs overlap by more than ${MAX_OVERLAP * 100} % of the smaller box`, () => {
    let worst = 0;
    for (const { boxes } of samples) {
      for (let a = 0; a < boxes.length; a++) {
        for (let b = a + 1; b < boxes.length; b++) {
          const p = boxes[a]!, q = boxes[b]!;
          const w = Math.max(0, Math.min(p.maxX, q.maxX) - Math.max(p.minX, q.minX));
          const h = Math.max(0, Math.min(p.maxY, q.maxY) - Math.max(p.minY, q.minY));
          const area = (g: GlyphBox) => (g.maxX - g.minX) * (g.maxY - g.minY);
          worst = Math.max(worst, (w * h) / Math.min(area(p), area(q)));
        }
      }
    }
    expect(worst).toBeLessThanOrEqual(MAX_OVERLAP);
  });

  test('the ink colours contrast with the background (WCAG AA for text)', () => {
    const failures: string[] = [];
    measured.forEach((m, i) => {
      const bg = luminance(m.background);
      expect(m.stops.length).toBeGreaterThan(0);
      for (const stop of m.stops) {
        const vsBg = contrast(luminance(stop), bg);
        if (vsBg < MIN_CONTRAST_BACKGROUND) failures.push(`seed ${samples[i]!.seed}: ink ${stop} vs background ${m.background} = ${vsBg.toFixed(2)}:1`);
      }
    });
    expect(failures).toEqual([]);
  });

  test('on the rendered pixels, the ink is where the glyphs are: every glyph is inked, little ink elsewhere', () => {
    measured.forEach((m, i) => {
      const seed = samples[i]!.seed;
      for (const ink of m.ink) expect({ seed, inked: ink > 0.12 }).toEqual({ seed, inked: true });
      expect({ seed, strayInk: m.darkOutsideGlyphs / m.darkTotal < MAX_STRAY_INK }).toEqual({ seed, strayInk: true });
    });
  });

  // Cancelled glyphs (whole glyph outlines drawn twice with opposite windings, there to mislead a
  // program that reads outlines) must not show. Antialiasing does not cancel coincident opposite
  // edges exactly, so a few pixels along them change slightly; measured: at most ~1 % of the
  // pixels by more than 16/255, where showing the same glyphs changes 7-16 %.
  test('the cancelled glyphs do not show: the pixels hardly differ from the same captcha without them', () => {
    const pixels = CAPTCHA_WIDTH * CAPTCHA_HEIGHT;
    cancelledDiffs.forEach((n, i) => {
      const seed = samples[i]!.seed;
      expect({ seed, invisible: n < 0.015 * pixels }).toEqual({ seed, invisible: true });
      expect({ seed, wouldShow: shownDiffs[i]! > 0.04 * pixels }).toEqual({ seed, wouldShow: true });
    });
  });
});
