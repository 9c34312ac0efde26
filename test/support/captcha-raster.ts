import { randomCaptchaText, renderCaptchaSvg, type Rng } from '../../src/modules/auth/captcha-render.ts';
import { parseContours } from './captcha-attack.ts';

/**
 * The strongest markup attack we wrote: it does not trust any outline, it computes the picture.
 * The path is filled the way a browser fills it (nonzero winding numbers, every sub-path at once,
 * so outlines that cancel each other cancel here too), on a grid of SCALE pixels per unit; thin
 * noise is removed by a morphological opening; the picture is cut into `count` glyphs at the
 * emptiest columns near equal spacing; each glyph's ink is normalised to a small grid and given the
 * label of its nearest neighbours among glyphs cut the same way from captchas of known text that
 * our own renderer drew (the attacker has the source, so it can make as many as it wants).
 */
const SCALE = 3;
const W = 120 * SCALE, H = 40 * SCALE;
const FX = 10, FY = 14;

/** Nonzero-winding fill of every sub-path of the SVG, one byte per pixel (1 = ink). */
export function rasterise(svg: string): Uint8Array {
  const rows: number[][] = Array.from({ length: H }, () => []);
  for (const c of parseContours(svg)) {
    const n = c.pts.length;
    for (let i = 0; i < n; i++) {
      const [x0, y0] = c.pts[i]!, [x1, y1] = c.pts[(i + 1) % n]!;
      if (y0 === y1) continue;
      const dir = y1 > y0 ? 1 : -1;
      const lo = Math.min(y0, y1) * SCALE, hi = Math.max(y0, y1) * SCALE;
      for (let r = Math.max(0, Math.ceil(lo - 0.5)); r < H && r + 0.5 < hi; r++) {
        const y = (r + 0.5) / SCALE;
        const x = x0 + ((y - y0) * (x1 - x0)) / (y1 - y0);
        rows[r]!.push(x * SCALE, dir);
      }
    }
  }
  const img = new Uint8Array(W * H);
  for (let r = 0; r < H; r++) {
    const row = rows[r]!;
    const order = Array.from({ length: row.length / 2 }, (_, k) => k).sort((a, b) => row[2 * a]! - row[2 * b]!);
    let wind = 0;
    for (let k = 0; k < order.length; k++) {
      wind += row[2 * order[k]! + 1]!;
      if (wind === 0 || k + 1 >= order.length) continue;
      const from = Math.max(0, Math.ceil(row[2 * order[k]!]! - 0.5)), to = Math.min(W, Math.ceil(row[2 * order[k + 1]!]! - 0.5));
      for (let x = from; x < to; x++) img[r * W + x] = 1;
    }
  }
  return img;
}

/** Erosion (min) or dilation (max) over a 3x3 square, as a row pass then a column pass. */
function morph(img: Uint8Array, erode: boolean): Uint8Array {
  const edge = erode ? 0 : 1;
  const pick = erode ? (a: number, b: number, c: number) => a & b & c : (a: number, b: number, c: number) => a | b | c;
  const mid = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    const o = y * W;
    for (let x = 0; x < W; x++) mid[o + x] = pick(x > 0 ? img[o + x - 1]! : 1 - edge, img[o + x]!, x < W - 1 ? img[o + x + 1]! : 1 - edge);
  }
  const out = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      out[i] = pick(y > 0 ? mid[i - W]! : 1 - edge, mid[i]!, y < H - 1 ? mid[i + W]! : 1 - edge);
    }
  }
  return out;
}

/** Opening: what is thinner than 3 pixels (a unit) goes, what is thicker keeps its shape. */
export const clean = (img: Uint8Array) => morph(morph(img, true), false);

/** `count` column ranges: cuts at the emptiest columns near equal spacing of the inked span. */
export function segment(img: Uint8Array, count: number): [number, number][] {
  const col = new Array<number>(W).fill(0);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) col[x]! += img[y * W + x]!;
  // The text's span: columns with a good share of the ink of the busiest columns (noise curves
  // that run the whole width have far less ink per column than glyphs).
  const busy = [...col].sort((a, b) => b - a)[Math.floor(W / 8)]!;
  let x0 = 0, x1 = W - 1;
  while (x0 < W - 1 && col[x0]! < busy * 0.3) x0++;
  while (x1 > x0 && col[x1]! < busy * 0.3) x1--;
  const slot = (x1 - x0 + 1) / count;
  const cuts = [x0];
  for (let k = 1; k < count; k++) {
    const guess = x0 + k * slot;
    let best = Math.round(guess), bestV = Infinity;
    for (let x = Math.round(guess - slot * 0.35); x <= Math.round(guess + slot * 0.35); x++) {
      // Ink in a 3-column window, plus a little pull toward the guess.
      const v = (col[x - 1] ?? 0) + col[x]! + (col[x + 1] ?? 0) + Math.abs(x - guess) * 0.3;
      if (v < bestV) [best, bestV] = [x, v];
    }
    cuts.push(best);
  }
  cuts.push(x1 + 1);
  return cuts.slice(1).map((c, k) => [cuts[k]!, c]);
}

/** Ink of one glyph normalised to an FX x FY grid of ink fractions over its own bounding box. */
export function features(img: Uint8Array, [a, b]: [number, number]): number[] {
  let minY = H, maxY = -1, minX = b, maxX = a - 1;
  for (let y = 0; y < H; y++) {
    for (let x = a; x < b; x++) {
      if (!img[y * W + x]) continue;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
    }
  }
  const f = new Array<number>(FX * FY + 1).fill(0);
  if (maxY < 0) return f;
  const w = maxX - minX + 1, h = maxY - minY + 1;
  for (let y = minY; y <= maxY; y++) {
    for (let x = minX; x <= maxX; x++) {
      if (!img[y * W + x]) continue;
      const cx = Math.min(FX - 1, Math.floor(((x - minX) * FX) / w)), cy = Math.min(FY - 1, Math.floor(((y - minY) * FY) / h));
      f[cy * FX + cx]! += (FX * FY) / (w * h);
    }
  }
  f[FX * FY] = (w / h) * 2; // aspect ratio tells I-like from W-like shapes
  return f;
}

function glyphFeatures(svg: string, count: number): number[][] {
  const img = clean(rasterise(svg));
  return segment(img, count).map((s) => features(img, s));
}

export interface RasterTemplates {
  samples: { ch: string; f: number[] }[];
}

/** Labelled glyphs cut from `captchas` captchas of known text drawn by our own renderer. */
export function buildRasterTemplates(rng: Rng, captchas = 400): RasterTemplates {
  const samples: { ch: string; f: number[] }[] = [];
  for (let i = 0; i < captchas; i++) {
    const text = randomCaptchaText(rng);
    glyphFeatures(renderCaptchaSvg(text, rng), text.length).forEach((f, k) => samples.push({ ch: text[k]!, f }));
  }
  return { samples };
}

/** Reads a captcha of `count` characters by k-nearest-neighbour votes (k = 3). */
export function readCaptchaRaster(svg: string, count: number, t: RasterTemplates): string {
  return glyphFeatures(svg, count)
    .map((f) => {
      const best: { ch: string; d: number }[] = [];
      for (const s of t.samples) {
        let d = 0;
        for (let k = 0; k < f.length; k++) d += (f[k]! - s.f[k]!) ** 2;
        if (best.length < 3 || d < best[2]!.d) {
          best.push({ ch: s.ch, d });
          best.sort((p, q) => p.d - q.d);
          if (best.length > 3) best.pop();
        }
      }
      const votes = new Map<string, number>();
      for (const b of best) votes.set(b.ch, (votes.get(b.ch) ?? 0) + 1 / (1e-6 + b.d));
      return [...votes].sort((p, q) => q[1] - p[1])[0]?.[0] ?? '?';
    })
    .join('');
}
