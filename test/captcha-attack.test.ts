import { describe, expect, test } from 'bun:test';
import { randomCaptchaText, renderCaptcha, renderCaptchaSvg } from '../src/modules/auth/captcha-render.ts';
import { buildTemplates, parseContours, readCaptcha, type AttackMode } from './support/captcha-attack.ts';
import { buildRasterTemplates, rasterise, readCaptchaRaster } from './support/captcha-raster.ts';
import { mulberry32 } from './support/rng.ts';

// The markup-reading attacks of issue 13 (test/support/captcha-attack.ts) against 500 captchas:
// each must read fewer than 5 %. 'structure' (outline and vertex counts, command pattern) read
// 94-103 of 500 of the renderer before last (one <path> per glyph in reading order), the issue's
// simpler one 300 of 300; 'geometry' (where the outlines sit and run: vector OCR) read 109 of 500
// of the last one. The picture-level attack (test/support/captcha-raster.ts) is bounded below.
describe('a program reading the SVG markup cannot solve the captcha', () => {
  for (const mode of ['structure', 'geometry'] as AttackMode[]) {
    test(`the ${mode} template attack solves < 5 % of 500 captchas`, () => {
      const templates = buildTemplates(mulberry32(7), 20, mode);
      const rng = mulberry32(4242);
      let solved = 0;
      for (let i = 0; i < 500; i++) {
        const text = randomCaptchaText(rng);
        const read = readCaptcha(renderCaptchaSvg(text, rng), text.length, templates);
        expect(read).toHaveLength(text.length);
        if (read === text) solved++;
      }
      expect({ solved, underFivePercent: solved < 25 }).toEqual({ solved, underFivePercent: true });
    }, 180_000);
  }

  test('the parser the attacks use reads our markup whole (so a low score is not a parse failure)', () => {
    const svg = renderCaptchaSvg('AC3WK', mulberry32(3));
    const contours = parseContours(svg);
    expect(contours.length).toBeGreaterThan(30);
    for (const c of contours) {
      for (const [x, y] of c.pts) {
        expect(x).toBeGreaterThanOrEqual(-1);
        expect(x).toBeLessThanOrEqual(121);
        expect(y).toBeGreaterThanOrEqual(-1);
        expect(y).toBeLessThanOrEqual(41);
      }
    }
  });

  test('the attacks are not duds: on the glyphs alone (no decoys, no noise) they read many characters', () => {
    const rng = mulberry32(99);
    const plain = () => {
      const text = randomCaptchaText(rng);
      return { text, svg: renderCaptcha(text, rng, { noiseStrokes: 0, cancelledGlyphs: 0 }).svg };
    };
    for (const mode of ['structure', 'geometry'] as AttackMode[]) {
      // Templates from the same clean pictures: what the attack knows when nothing hides the glyphs.
      const templates = buildTemplates(mulberry32(7), 20, mode, { noiseStrokes: 0, cancelledGlyphs: 0 });
      let chars = 0, total = 0;
      for (let i = 0; i < 100; i++) {
        const { text, svg } = plain();
        const read = readCaptcha(svg, text.length, templates);
        for (let k = 0; k < text.length; k++) if (read[k] === text[k]) chars++;
        total += text.length;
      }
      // Measured: structure ~18 %, geometry ~49 % of characters (on the real captchas: 4-6 %).
      expect({ mode, readsCharacters: chars / total > (mode === 'structure' ? 0.12 : 0.3) }).toEqual({ mode, readsCharacters: true });
    }
  }, 120_000);
});

// The picture-level attack (test/support/captcha-raster.ts: the path filled as a browser fills it,
// cleaned, cut into glyphs, nearest neighbours among glyphs of captchas our renderer drew). A legible
// captcha cannot stop OCR of its picture; this bound keeps a change for legibility from giving away
// more than it did: 77 of 500 (15 %) before issue 25 (120x40, 4-5 characters of 23), 56 of 500
// after it (`npm run bench:captcha`, 800 captchas of templates). Here fewer, for the suite's time.
describe('a program reading the rendered picture solves few captchas', () => {
  test('the raster OCR solves < 15 % of 300 captchas', () => {
    const templates = buildRasterTemplates(mulberry32(7), 400);
    const rng = mulberry32(4242);
    let solved = 0;
    for (let i = 0; i < 300; i++) {
      const text = randomCaptchaText(rng);
      if (readCaptchaRaster(renderCaptchaSvg(text, rng), text.length, templates) === text) solved++;
    }
    console.log(`raster OCR: ${solved}/300 solved`);
    expect({ solved, underFifteenPercent: solved < 45 }).toEqual({ solved, underFifteenPercent: true });
  }, 240_000);
});

describe('cancelled glyphs: whole glyph outlines drawn twice with opposite windings', () => {
  const render = (seed: number, decoys?: 'omit' | 'show') => {
    const rng = mulberry32(seed);
    return renderCaptcha(randomCaptchaText(rng), rng, decoys ? { decoys } : {}).svg;
  };
  const differing = (a: Uint8Array, b: Uint8Array) => a.reduce((n, v, i) => n + (v !== b[i] ? 1 : 0), 0);

  test('fill nothing: the nonzero fill of the path is the same pixel for pixel with or without them', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const withPairs = rasterise(render(seed)), without = rasterise(render(seed, 'omit'));
      // A handful of the 43 200 pixels may flip where an edge passes exactly through a pixel centre
      // (measured 3-14); showing the decoys flips thousands.
      expect({ seed, differing: differing(withPairs, without) < 40 }).toEqual({ seed, differing: true });
    }
  });

  test('yet are there: without the cancelling copies they would be glyph-sized ink', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const shown = rasterise(render(seed, 'show')), without = rasterise(render(seed, 'omit'));
      expect(differing(shown, without)).toBeGreaterThan(1500);
    }
  });

  test('outlines run both ways: winding direction does not tell glyphs, noise and decoys apart', () => {
    const sign = (c: { pts: [number, number][] }) =>
      Math.sign(c.pts.reduce((a, [x0, y0], i) => {
        const [x1, y1] = c.pts[(i + 1) % c.pts.length]!;
        return a + x0 * y1 - x1 * y0;
      }, 0));
    const share = (svgs: string[]) => {
      const signs = svgs.flatMap((svg) => parseContours(svg).map(sign));
      return Math.min(signs.filter((s) => s > 0).length, signs.filter((s) => s < 0).length) / signs.length;
    };
    const rng = mulberry32(17);
    const renders = (opts: { noiseStrokes?: number; cancelledGlyphs?: number }) => Array.from({ length: 20 }, () => renderCaptcha(randomCaptchaText(rng), rng, opts).svg);
    // The glyphs alone: each glyph runs either way (else dropping one sign would drop every
    // cancelling copy); and everything together.
    expect(share(renders({ noiseStrokes: 0, cancelledGlyphs: 0 }))).toBeGreaterThan(0.25);
    expect(share(renders({}))).toBeGreaterThan(0.3);
  });
});
