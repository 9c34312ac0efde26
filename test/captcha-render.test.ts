import { describe, expect, test } from "bun:test";
import { GLYPHS } from "../src/modules/auth/captcha-glyphs.ts";
import {
  CAPTCHA_ALPHABET,
  glyphBoxes,
  randomCaptchaText,
  renderCaptchaSvg,
  type Rng,
} from "../src/modules/auth/captcha-render.ts";
import { mulberry32 } from './support/rng.ts';


const glyphPaths = (svg: string) => [...svg.matchAll(/<path class="g" d="([^"]+)"/g)].map((m) => m[1]!);
const noisePaths = (svg: string) => [...svg.matchAll(/<path class="n" d="([^"]+)"/g)].map((m) => m[1]!);

/** Glyph paths use only absolute M/L/Z, so numbers alternate x, y. */
function points(d: string): Array<[number, number]> {
  const nums = (d.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
  expect(nums.length % 2).toBe(0);
  const pts: Array<[number, number]> = [];
  for (let i = 0; i < nums.length; i += 2) pts.push([nums[i]!, nums[i + 1]!]);
  return pts;
}

function bbox(d: string) {
  const pts = points(d);
  return {
    minX: Math.min(...pts.map((p) => p[0])),
    maxX: Math.max(...pts.map((p) => p[0])),
    minY: Math.min(...pts.map((p) => p[1])),
    maxY: Math.max(...pts.map((p) => p[1])),
  };
}

/** Path shape with its position removed, so only geometry is compared. */
function relative(d: string): string {
  const pts = points(d);
  const [x0, y0] = pts[0]!;
  return pts.map(([x, y]) => `${(x - x0).toFixed(1)},${(y - y0).toFixed(1)}`).join(" ");
}

describe("captcha alphabet", () => {
  test("has no look-alike characters and a glyph for each", () => {
    for (const bad of "0Oo1Ili5S2Z8BUV9gsz") expect(CAPTCHA_ALPHABET).not.toContain(bad);
    expect(new Set(CAPTCHA_ALPHABET).size).toBe(CAPTCHA_ALPHABET.length);
    for (const ch of CAPTCHA_ALPHABET) expect(GLYPHS[ch]).toBeDefined();
  });
});

describe("randomCaptchaText", () => {
  test("respects length bounds and alphabet over many draws", () => {
    const rng = mulberry32(42);
    const lengths = new Set<number>();
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const t = randomCaptchaText(rng);
      expect(t.length).toBeGreaterThanOrEqual(4);
      expect(t.length).toBeLessThanOrEqual(5);
      lengths.add(t.length);
      for (const ch of t) {
        expect(CAPTCHA_ALPHABET).toContain(ch);
        seen.add(ch);
      }
    }
    expect([...lengths].sort()).toEqual([4, 5]);
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
    const svg = renderCaptchaSvg("AC3W7", mulberry32(3));
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain('width="120"');
    expect(svg).toContain('height="40"');
    expect(svg).toContain('viewBox="0 0 120 40"');
    expect(svg).not.toContain("<text");
    expect(svg.toLowerCase()).not.toContain("font");
    expect(svg).toContain("<rect");
  });

  test("one glyph path per character plus noise paths", () => {
    const svg = renderCaptchaSvg("KQX4", mulberry32(9), { noiseStrokes: 4 });
    expect(glyphPaths(svg)).toHaveLength(4);
    // 4 curves plus one path of dots
    expect(noisePaths(svg)).toHaveLength(5);
    expect(noisePaths(renderCaptchaSvg("KQX4", mulberry32(9), { noiseStrokes: 0 }))).toHaveLength(0);
  });

  test("every glyph stays inside the canvas and inside its own slot", () => {
    const rng = mulberry32(1234);
    for (const size of [{}, { width: 200, height: 60 }, { width: 90, height: 30 }]) {
      for (let i = 0; i < 300; i++) {
        const text = randomCaptchaText(rng);
        const svg = renderCaptchaSvg(text, rng, size);
        const w = size.width ?? 120, h = size.height ?? 40;
        const slots = glyphBoxes(text, size);
        const paths = glyphPaths(svg);
        expect(paths).toHaveLength(text.length);
        paths.forEach((d, k) => {
          const b = bbox(d);
          expect(b.minX).toBeGreaterThanOrEqual(0);
          expect(b.minY).toBeGreaterThanOrEqual(0);
          expect(b.maxX).toBeLessThanOrEqual(w);
          expect(b.maxY).toBeLessThanOrEqual(h);
          const s = slots[k]!;
          expect(b.minX).toBeGreaterThanOrEqual(s.minX);
          expect(b.maxX).toBeLessThanOrEqual(s.maxX);
          expect(b.minY).toBeGreaterThanOrEqual(s.minY);
          expect(b.maxY).toBeLessThanOrEqual(s.maxY);
          // Glyphs must be big enough to read, not shrunk into dots.
          expect(b.maxY - b.minY).toBeGreaterThan(h * 0.35);
        });
        // Adjacent glyph boxes may touch but not meaningfully overlap.
        for (let k = 1; k < paths.length; k++) {
          const a = bbox(paths[k - 1]!), b = bbox(paths[k]!);
          const overlap = Math.max(0, a.maxX - b.minX);
          expect(overlap).toBeLessThanOrEqual(0.1 * Math.min(a.maxX - a.minX, b.maxX - b.minX));
        }
      }
    }
  });

  test("identical characters never produce identical path data", () => {
    const one = glyphPaths(renderCaptchaSvg("AAAA", mulberry32(1)));
    const two = glyphPaths(renderCaptchaSvg("AAAA", mulberry32(2)));
    for (let k = 0; k < 4; k++) expect(one[k]).not.toBe(two[k]);
    // Within one image, even after removing the position, no two shapes match.
    expect(new Set(one).size).toBe(4);
    expect(new Set(one.map(relative)).size).toBe(4);
    expect(new Set(two.map(relative)).size).toBe(4);
  });

  test("a seeded rng gives reproducible output", () => {
    const a = renderCaptchaSvg("HJ6MT", mulberry32(77));
    const b = renderCaptchaSvg("HJ6MT", mulberry32(77));
    expect(a).toBe(b);
    expect(renderCaptchaSvg("HJ6MT", mulberry32(78))).not.toBe(a);
  });

  test("rejects characters outside the alphabet", () => {
    const rng = mulberry32(5);
    for (const bad of ["A0CD", "abcd", "AB", "ACD ", "ACDO", "ACD1", "Ä"]) {
      expect(() => renderCaptchaSvg(bad, rng)).toThrow();
    }
    expect(() => renderCaptchaSvg("", rng)).toThrow();
    expect(() => renderCaptchaSvg("ACD", rng, { width: 0 })).toThrow();
    expect(() => renderCaptchaSvg("ACD", rng, { noiseStrokes: -1 })).toThrow();
  });

  test("renders every character of the alphabet", () => {
    const rng = mulberry32(11);
    for (const ch of CAPTCHA_ALPHABET) {
      const paths = glyphPaths(renderCaptchaSvg(ch.repeat(4), rng));
      expect(paths).toHaveLength(4);
      for (const d of paths) expect(points(d).length).toBeGreaterThanOrEqual(8);
    }
  });

  test("is fast", () => {
    const rng = mulberry32(99);
    const texts = Array.from({ length: 500 }, () => randomCaptchaText(rng));
    const t0 = performance.now();
    for (const t of texts) renderCaptchaSvg(t, rng);
    const perRender = (performance.now() - t0) / texts.length;
    // Generous bound for slow CI; locally this is well under 1 ms.
    expect(perRender).toBeLessThan(5);
  });
});
