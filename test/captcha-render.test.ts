import { describe, expect, test } from "bun:test";
import { GLYPHS } from "../src/modules/auth/captcha-glyphs.ts";
import {
  CAPTCHA_ALPHABET,
  CAPTCHA_HEIGHT,
  CAPTCHA_WIDTH,
  randomCaptchaText,
  renderCaptcha,
  renderCaptchaSvg,
  type Rng,
} from "../src/modules/auth/captcha-render.ts";
import { mulberry32 } from './support/rng.ts';


import { parseContours } from './support/captcha-attack.ts';

const paths = (svg: string) => [...svg.matchAll(/<path\b[^>]*>/g)].map((m) => m[0]);

describe("captcha alphabet", () => {
  test("has no look-alike characters and a glyph for each", () => {
    for (const bad of "0Oo1Ili5S2Z8BUV9gsz") expect(CAPTCHA_ALPHABET).not.toContain(bad);
    // And what a reader confused at 1x under the distortion (issue 25): 4/A, 6/G/C/Q, 7/T, F/E, X/Y/K.
    for (const bad of "467FGXY") expect(CAPTCHA_ALPHABET).not.toContain(bad);
    expect(new Set(CAPTCHA_ALPHABET).size).toBe(CAPTCHA_ALPHABET.length);
    for (const ch of CAPTCHA_ALPHABET) expect(GLYPHS[ch]).toBeDefined();
  });
});

describe("randomCaptchaText", () => {
  test("five characters by default, every character of the alphabet drawn", () => {
    const rng = mulberry32(42);
    const lengths = new Set<number>();
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const t = randomCaptchaText(rng);
      lengths.add(t.length);
      for (const ch of t) {
        expect(CAPTCHA_ALPHABET).toContain(ch);
        seen.add(ch);
      }
    }
    expect([...lengths]).toEqual([5]);
    expect(seen.size).toBe(CAPTCHA_ALPHABET.length);
  });

  test("honours custom bounds, even with an rng that returns 1", () => {
    expect(randomCaptchaText(mulberry32(1), 6, 6)).toHaveLength(6);
    expect(randomCaptchaText(() => 0.9999999999, 3, 4)).toHaveLength(4);
    expect(() => randomCaptchaText(mulberry32(1), 5, 4)).toThrow();
  });
});

describe("renderCaptchaSvg", () => {
  test("draws outlines, never text or fonts", () => {
    const svg = renderCaptchaSvg("AC3WK", mulberry32(3));
    expect(svg.startsWith("<svg")).toBe(true);
    // Shown at 240x80 CSS pixels; every coordinate is in the 120x40 layout units of the viewBox.
    expect(svg).toContain(`width="${CAPTCHA_WIDTH}" height="${CAPTCHA_HEIGHT}" viewBox="0 0 120 40"`);
    expect([CAPTCHA_WIDTH, CAPTCHA_HEIGHT]).toEqual([240, 80]);
    expect(renderCaptchaSvg("AC3WK", mulberry32(3), { scale: 1 })).toContain('width="120" height="40" viewBox="0 0 120 40"');
    expect(svg).not.toContain("<text");
    expect(svg.toLowerCase()).not.toContain("font");
    expect(svg).toContain("<rect");
  });

  test("glyphs and noise are ONE path with one fill: no per-glyph element, no class, no colour tells them apart", () => {
    const rng = mulberry32(9);
    for (let i = 0; i < 50; i++) {
      const svg = renderCaptchaSvg(randomCaptchaText(rng), rng);
      expect(paths(svg)).toHaveLength(1);
      expect(paths(svg)[0]).toMatch(/^<path d="[^"]+" fill="url\(#f\)"\/>$/);
      expect(svg).not.toMatch(/class=|stroke=/);
      // Noise is in it too: more sub-paths than any glyph table has outlines.
      expect(parseContours(svg).length).toBeGreaterThan(40);
    }
  });

  test("vertex counts and command patterns vary per render and per glyph", () => {
    // The same text twice: the sub-path vertex counts and the command letters differ.
    const a = renderCaptchaSvg("AAAA", mulberry32(1));
    const b = renderCaptchaSvg("AAAA", mulberry32(2));
    const counts = (svg: string) => parseContours(svg).map((c) => c.pts.length).sort((x, y) => x - y).join(",");
    const letters = (svg: string) => (svg.match(/ d="([^"]+)"/)![1]!.match(/[A-Za-z]/g) ?? []).join("");
    expect(counts(a)).not.toBe(counts(b));
    expect(letters(a)).not.toBe(letters(b));
    // Absolute and relative lines, quadratic segments, both closes: no fixed pattern per shape.
    for (const cmd of ["M", "L", "l", "Q", "q", "Z", "z"]) expect(letters(a)).toContain(cmd);
    // Over many renders of one character the outline vertex counts spread widely.
    const rng = mulberry32(5);
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) for (const c of parseContours(renderCaptchaSvg("K", rng))) seen.add(c.pts.length);
    expect(seen.size).toBeGreaterThan(15);
  });

  test("document order is unrelated to reading order", () => {
    // Rank correlation between a sub-path's position in the markup and its x position.
    const rng = mulberry32(21);
    let sum = 0;
    const runs = 50;
    for (let i = 0; i < runs; i++) {
      const xs = parseContours(renderCaptchaSvg(randomCaptchaText(rng), rng)).map((c) => c.pts.reduce((s, p) => s + p[0], 0) / c.pts.length);
      const rank = (v: number[]) => {
        const order = v.map((x, k) => [x, k] as const).sort((p, q) => p[0] - q[0]);
        const r = new Array<number>(v.length);
        order.forEach(([, k], pos) => (r[k] = pos));
        return r;
      };
      const rx = rank(xs), n = xs.length;
      const d2 = rx.reduce((s, r, k) => s + (r - k) ** 2, 0);
      sum += 1 - (6 * d2) / (n * (n * n - 1));
    }
    expect(Math.abs(sum / runs)).toBeLessThan(0.1);
  });

  test("every glyph stays inside the canvas, in reading order, big enough to read; neighbours overlap at most a little", { timeout: 60_000 }, () => {
    const rng = mulberry32(1234);
    for (const size of [{}, { width: 200, height: 60 }, { width: 90, height: 30 }]) {
      for (let i = 0; i < 60; i++) {
        const text = randomCaptchaText(rng);
        const { svg, boxes } = renderCaptcha(text, rng, size);
        const w = size.width ?? 120, h = size.height ?? 40;
        expect(boxes).toHaveLength(text.length);
        boxes.forEach((b, k) => {
          expect(b.minX).toBeGreaterThanOrEqual(0);
          expect(b.maxX).toBeLessThanOrEqual(w);
          expect(b.minY).toBeGreaterThanOrEqual(0);
          expect(b.maxY).toBeLessThanOrEqual(h);
          expect(b.maxY - b.minY).toBeGreaterThan(h * 0.4);
          const prev = boxes[k - 1];
          if (!prev) return;
          // Left to right, and touching at most: the overlap of neighbouring boxes is under a
          // third of the narrower one (glyph boxes are loose around slanted strokes).
          expect(b.minX + b.maxX).toBeGreaterThan(prev.minX + prev.maxX);
          const overlap = Math.max(0, prev.maxX - b.minX) / Math.min(b.maxX - b.minX, prev.maxX - prev.minX);
          expect(overlap).toBeLessThan(0.34);
        });
        // Every drawn point is on the canvas (jitter included).
        const off = parseContours(svg).flatMap((c) => c.pts).filter(([x, y]) => !(x >= -0.5 && x <= w + 0.5 && y >= -0.5 && y <= h + 0.5));
        expect(off).toEqual([]);
      }
    }
  });

  test("a seeded rng gives reproducible output", () => {
    const a = renderCaptchaSvg("HJ3MT", mulberry32(77));
    const b = renderCaptchaSvg("HJ3MT", mulberry32(77));
    expect(a).toBe(b);
    expect(renderCaptchaSvg("HJ3MT", mulberry32(78))).not.toBe(a);
  });

  test("rejects characters outside the alphabet", () => {
    const rng = mulberry32(5);
    for (const bad of ["A0CD", "abcd", "AB", "ACD ", "ACDO", "ACD1", "Ä"]) {
      expect(() => renderCaptchaSvg(bad, rng)).toThrow();
    }
    expect(() => renderCaptchaSvg("", rng)).toThrow();
    expect(() => renderCaptchaSvg("ACD", rng, { width: 0 })).toThrow();
    expect(() => renderCaptchaSvg("ACD", rng, { scale: 0 })).toThrow();
    expect(() => renderCaptchaSvg("ACD", rng, { noiseStrokes: -1 })).toThrow();
  });

  test("renders every character of the alphabet", () => {
    const rng = mulberry32(11);
    for (const ch of CAPTCHA_ALPHABET) {
      const { boxes } = renderCaptcha(ch.repeat(4), rng);
      expect(boxes).toHaveLength(4);
      for (const b of boxes) expect(b.maxX - b.minX).toBeGreaterThan(2);
    }
  });
});
