// Self-contained SVG captcha renderer. Pure standard JS on purpose: it runs
// unchanged under Bun and on Cloudflare Workers, and needs no font, canvas or
// image library. Characters are drawn as filled outline polygons (never
// <text>), and every vertex of every glyph instance is jittered, so the path
// data of two identical characters never matches and cannot be looked up in
// a glyph table; reading it takes rasterising plus real recognition.

import { GLYPHS, type Pt, type Stroke } from "./captcha-glyphs.ts";

/** No look-alikes: 0/O, 1/I/L-lowercase, 5/S, 2/Z, 8/B, U/V, 9/g are all left out. */
export const CAPTCHA_ALPHABET = "ACDEFGHJKLMNPQRTWXY3467";

/** Uniform in [0, 1). Injected so callers choose the entropy source and tests can seed it. */
export type Rng = () => number;

export interface CaptchaRenderOptions {
  width?: number;
  height?: number;
  noiseStrokes?: number;
}

/** Axis-aligned box of one rendered glyph, in SVG user units. */
export interface GlyphBox {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

const GRID_CX = 5;
const GRID_CY = 7;
const GRID_H = 14;
// Turns sharper than this are split into separate pieces with a round joint:
// a miter there would spike far outside the stroke.
const SPLIT_COS = Math.cos((55 * Math.PI) / 180);
// Per-vertex noise after layout, in user units. Large enough that rounded
// coordinates differ between instances, small enough not to hurt legibility.
const VERTEX_JITTER = 0.35;
const JOINT_SIDES = 8;

interface PreparedGlyph {
  pieces: Pt[][];
  joints: Pt[];
}

function prepare(strokes: readonly Stroke[]): PreparedGlyph {
  const pieces: Pt[][] = [];
  const joints: Pt[] = [];
  for (const stroke of strokes) {
    const pts: Pt[] = [];
    for (const p of stroke) {
      const last = pts[pts.length - 1];
      if (!last || Math.hypot(p[0] - last[0], p[1] - last[1]) > 1e-6) pts.push(p);
    }
    let cur: Pt[] = [pts[0]!];
    for (let i = 1; i < pts.length - 1; i++) {
      const a = pts[i - 1]!, b = pts[i]!, c = pts[i + 1]!;
      const l1 = Math.hypot(b[0] - a[0], b[1] - a[1]);
      const l2 = Math.hypot(c[0] - b[0], c[1] - b[1]);
      const cos = ((b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1])) / (l1 * l2);
      cur.push(b);
      if (cos < SPLIT_COS) {
        pieces.push(cur);
        joints.push(b);
        cur = [b];
      }
    }
    cur.push(pts[pts.length - 1]!);
    pieces.push(cur);
  }
  return { pieces, joints };
}

const PREPARED = new Map<string, PreparedGlyph>();
for (const ch of CAPTCHA_ALPHABET) {
  const strokes = GLYPHS[ch];
  // Fail at import time rather than on some unlucky request.
  if (!strokes) throw new Error(`captcha: no glyph outline for ${JSON.stringify(ch)}`);
  PREPARED.set(ch, prepare(strokes));
}

/** Miter-joined outline of an open polyline; pieces never contain sharp turns. */
function outlinePiece(pts: Pt[], hw: number): number[] {
  const n = pts.length;
  const left: number[] = [];
  const right: number[] = [];
  for (let i = 0; i < n; i++) {
    const p = pts[i]!;
    const prev = pts[Math.max(0, i - 1)]!;
    const next = pts[Math.min(n - 1, i + 1)]!;
    let nx = 0, ny = 0;
    if (i > 0) {
      const l = Math.hypot(p[0] - prev[0], p[1] - prev[1]);
      nx += -(p[1] - prev[1]) / l;
      ny += (p[0] - prev[0]) / l;
    }
    if (i < n - 1) {
      const l = Math.hypot(next[0] - p[0], next[1] - p[1]);
      nx += -(next[1] - p[1]) / l;
      ny += (next[0] - p[0]) / l;
    }
    const nl = Math.hypot(nx, ny);
    // Inner/outer points sit on the bisector at the miter distance hw / cos(turn/2).
    const k = i > 0 && i < n - 1 ? (2 * hw) / (nl * nl) : hw / nl;
    left.push(p[0] + nx * k, p[1] + ny * k);
    right.push(p[0] - nx * k, p[1] - ny * k);
  }
  const poly = left;
  for (let i = n - 1; i >= 0; i--) poly.push(right[2 * i]!, right[2 * i + 1]!);
  return poly;
}

function jointPolygon(p: Pt, hw: number): number[] {
  const poly: number[] = [];
  for (let i = 0; i < JOINT_SIDES; i++) {
    const a = (i * 2 * Math.PI) / JOINT_SIDES;
    poly.push(p[0] + hw * 1.04 * Math.cos(a), p[1] + hw * 1.04 * Math.sin(a));
  }
  return poly;
}

/** Same winding for every sub-polygon, so overlaps union under the nonzero fill rule. */
function orient(poly: number[]): number[] {
  let area = 0;
  for (let i = 0, n = poly.length; i < n; i += 2) {
    const j = (i + 2) % n;
    area += poly[i]! * poly[j + 1]! - poly[j]! * poly[i + 1]!;
  }
  if (area >= 0) return poly;
  const out: number[] = [];
  for (let i = poly.length - 2; i >= 0; i -= 2) out.push(poly[i]!, poly[i + 1]!);
  return out;
}

const between = (rng: Rng, lo: number, hi: number) => lo + (hi - lo) * rng();
const fmt = (v: number) => String(Math.round(v * 10) / 10);

// Colours are chosen by relative luminance (what contrast is made of), not by HSL lightness: at one
// lightness a green is several times brighter than a blue, so lightness ranges alone let some
// glyphs come out lighter than some noise. These ranges keep every glyph at least ~2.5:1 darker
// than any noise and ~7:1 against the background (WCAG AA asks 4.5:1 for text).
const GLYPH_LUMINANCE: [number, number] = [0.015, 0.055];
const NOISE_LUMINANCE: [number, number] = [0.22, 0.42];

/** WCAG relative luminance of an HSL colour (s, l in percent). */
function hslLuminance(h: number, s: number, l: number): number {
  const sat = s / 100, light = l / 100;
  const a = sat * Math.min(light, 1 - light);
  const channel = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = light - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(8) + 0.0722 * channel(4);
}

/** `hsl()` of the given hue and saturation at the lightness that reaches luminance `y`. */
function colourWithLuminance(h: number, s: number, y: number): string {
  // Luminance grows with lightness for a fixed hue and saturation, so bisection finds it.
  let lo = 0, hi = 100;
  for (let k = 0; k < 20; k++) {
    const mid = (lo + hi) / 2;
    if (hslLuminance(h, s, mid) < y) lo = mid;
    else hi = mid;
  }
  return `hsl(${h},${s}%,${fmt((lo + hi) / 2)}%)`;
}

export function randomCaptchaText(rng: Rng, minLen = 4, maxLen = 5): string {
  if (!Number.isInteger(minLen) || !Number.isInteger(maxLen) || minLen < 1 || maxLen < minLen) {
    throw new RangeError(`captcha: invalid length range ${minLen}..${maxLen}`);
  }
  // min() guards against an Rng that (wrongly) returns exactly 1.
  const len = Math.min(maxLen, minLen + Math.floor(rng() * (maxLen - minLen + 1)));
  let out = "";
  for (let i = 0; i < len; i++) {
    out += CAPTCHA_ALPHABET[Math.min(CAPTCHA_ALPHABET.length - 1, Math.floor(rng() * CAPTCHA_ALPHABET.length))];
  }
  return out;
}

interface Layout {
  width: number;
  height: number;
  margin: number;
  slotW: number;
  slotH: number;
}

function layoutFor(text: string, opts: CaptchaRenderOptions): Layout {
  const width = opts.width ?? 120;
  const height = opts.height ?? 40;
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) {
    throw new RangeError("captcha: width and height must be positive numbers");
  }
  if (text.length === 0) throw new Error("captcha: text must not be empty");
  for (const ch of text) {
    if (!PREPARED.has(ch)) throw new Error(`captcha: character ${JSON.stringify(ch)} is not in the alphabet`);
  }
  const margin = Math.max(1, Math.min(width, height) * 0.05);
  return { width, height, margin, slotW: (width - 2 * margin) / text.length, slotH: height - 2 * margin };
}

/**
 * The equal-width slot each glyph is confined to (glyph, jitter included).
 * Slots never overlap, which is what keeps adjacent glyphs apart.
 */
export function glyphBoxes(text: string, opts: CaptchaRenderOptions = {}): GlyphBox[] {
  const l = layoutFor(text, opts);
  return [...text].map((_, i) => ({
    minX: l.margin + i * l.slotW,
    minY: l.margin,
    maxX: l.margin + (i + 1) * l.slotW,
    maxY: l.margin + l.slotH,
  }));
}

function glyphPath(g: PreparedGlyph, slotX: number, l: Layout, rng: Rng): string {
  const hw = between(rng, 0.72, 0.92);
  const polys = [...g.pieces.map((p) => outlinePiece(p, hw)), ...g.joints.map((p) => jointPolygon(p, hw))];

  // Random affine per instance: scale (slightly anisotropic), shear, rotation.
  const s = (l.slotH * between(rng, 0.62, 0.78)) / GRID_H;
  const sx = s * between(rng, 0.85, 1.1);
  const sy = s * between(rng, 0.9, 1.1);
  const shear = between(rng, -0.25, 0.25);
  const rot = between(rng, -0.3, 0.3);
  const cos = Math.cos(rot), sin = Math.sin(rot);
  const a = cos * sx, b = sin * sx;
  const c = (cos * shear - sin) * sy, d = (sin * shear + cos) * sy;

  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  for (const poly of polys) {
    for (let i = 0; i < poly.length; i += 2) {
      const x = poly[i]! - GRID_CX, y = poly[i + 1]! - GRID_CY;
      const tx = a * x + c * y, ty = b * x + d * y;
      poly[i] = tx;
      poly[i + 1] = ty;
      if (tx < minX) minX = tx;
      if (tx > maxX) maxX = tx;
      if (ty < minY) minY = ty;
      if (ty > maxY) maxY = ty;
    }
  }

  // Keep the jittered, rounded outline strictly inside the slot: shrink if the
  // rotated glyph is too big, then place it randomly in the remaining room.
  const pad = VERTEX_JITTER + 0.05;
  const availW = l.slotW - 2 * pad, availH = l.slotH - 2 * pad;
  const fit = Math.min(1, availW / (maxX - minX), availH / (maxY - minY));
  // Averaging two draws biases placement toward the slot centre, which reads better.
  const ox = slotX + pad + ((rng() + rng()) / 2) * (availW - (maxX - minX) * fit) - minX * fit;
  const oy = l.margin + pad + ((rng() + rng()) / 2) * (availH - (maxY - minY) * fit) - minY * fit;

  let d_ = "";
  for (const poly of polys) {
    const p = orient(poly);
    for (let i = 0; i < p.length; i += 2) {
      const x = p[i]! * fit + ox + (rng() * 2 - 1) * VERTEX_JITTER;
      const y = p[i + 1]! * fit + oy + (rng() * 2 - 1) * VERTEX_JITTER;
      d_ += (i === 0 ? "M" : "L") + fmt(x) + " " + fmt(y);
    }
    d_ += "Z";
  }
  const fill = colourWithLuminance(Math.floor(rng() * 360), Math.round(between(rng, 40, 70)), between(rng, ...GLYPH_LUMINANCE));
  return `<path class="g" d="${d_}" fill="${fill}"/>`;
}

/** Thin, light bezier strokes spanning the canvas: they cross glyphs and hamper segmentation. */
function noiseCurve(l: Layout, rng: Rng, thin: boolean): string {
  const { width: w, height: h } = l;
  const y = () => fmt(between(rng, h * 0.1, h * 0.9));
  const d =
    `M${fmt(between(rng, 0, w * 0.25))} ${y()}` +
    `C${fmt(between(rng, w * 0.1, w * 0.5))} ${fmt(between(rng, -h * 0.3, h * 1.3))} ` +
    `${fmt(between(rng, w * 0.5, w * 0.9))} ${fmt(between(rng, -h * 0.3, h * 1.3))} ` +
    `${fmt(between(rng, w * 0.75, w))} ${y()}`;
  const stroke = colourWithLuminance(Math.floor(rng() * 360), Math.round(between(rng, 25, 45)), between(rng, ...NOISE_LUMINANCE));
  const sw = thin ? between(rng, 0.6, 0.9) : between(rng, 0.9, 1.4);
  return `<path class="n" d="${d}" fill="none" stroke="${stroke}" stroke-width="${fmt(sw)}" stroke-linecap="round"/>`;
}

function noiseDots(l: Layout, rng: Rng): string {
  const count = Math.round((l.width * l.height) / 400);
  let d = "";
  for (let i = 0; i < count; i++) {
    d += `M${fmt(between(rng, 1, l.width - 1))} ${fmt(between(rng, 1, l.height - 1))}h0.1`;
  }
  const stroke = colourWithLuminance(Math.floor(rng() * 360), 30, between(rng, NOISE_LUMINANCE[0] + 0.03, NOISE_LUMINANCE[1]));
  return `<path class="n" d="${d}" fill="none" stroke="${stroke}" stroke-width="1.6" stroke-linecap="round"/>`;
}

/** Returns SVG markup (not base64). Throws on characters outside CAPTCHA_ALPHABET. */
export function renderCaptchaSvg(text: string, rng: Rng, opts: CaptchaRenderOptions = {}): string {
  const l = layoutFor(text, opts);
  const noise = opts.noiseStrokes ?? 5;
  if (!(Number.isInteger(noise) && noise >= 0)) throw new RangeError("captcha: noiseStrokes must be a non-negative integer");

  const bg = `hsl(${Math.floor(rng() * 360)},35%,${Math.round(between(rng, 93, 97))}%)`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${l.width}" height="${l.height}" viewBox="0 0 ${l.width} ${l.height}">`,
    `<rect width="${l.width}" height="${l.height}" fill="${bg}"/>`,
  ];
  if (noise > 0) parts.push(noiseDots(l, rng));
  // Some noise goes under the glyphs and some over, so neither layer is clean.
  const under = Math.ceil(noise / 2);
  for (let i = 0; i < under; i++) parts.push(noiseCurve(l, rng, false));
  let i = 0;
  for (const ch of text) parts.push(glyphPath(PREPARED.get(ch)!, l.margin + i++ * l.slotW, l, rng));
  for (let j = under; j < noise; j++) parts.push(noiseCurve(l, rng, true));
  parts.push("</svg>");
  return parts.join("");
}
