// Self-contained SVG captcha renderer. Pure standard JS on purpose: it runs
// unchanged under Bun and on Cloudflare Workers, and needs no font, canvas or
// image library. Characters are drawn as filled outline polygons (never
// <text>).
//
// The markup must not give the answer away to a program that reads it instead
// of looking at the picture. So: every glyph piece and every piece of noise is
// a sub-path of ONE <path> with one fill; the sub-paths are shuffled (document
// order says nothing about reading order); every outline is resampled with a
// random number of extra vertices and written with a random mix of commands
// (absolute/relative lines, quadratic segments, implied repeats), so neither a
// vertex count nor a command pattern belongs to a character; strokes are cut
// into a random number of overlapping parts; and the whole picture goes
// through a smooth random warp, with noise strokes and stroke-like clutter
// among the glyphs, which makes template matching on the pixels hard too.

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

/** A round joint with a random number of sides and a random start angle. */
function jointPolygon(p: Pt, hw: number, rng: Rng): number[] {
  const poly: number[] = [];
  const sides = JOINT_SIDES - 2 + Math.floor(rng() * 5);
  const a0 = rng() * Math.PI;
  for (let i = 0; i < sides; i++) {
    const a = a0 + (i * 2 * Math.PI) / sides;
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
const round1 = (v: number) => Math.round(v * 10) / 10;
const fmt = (v: number) => String(round1(v));

// Colours are chosen by relative luminance (what contrast is made of), not by HSL lightness: at one
// lightness a green is several times brighter than a blue. This range keeps every stop of the ink
// gradient ~7:1 against the background (WCAG AA asks 4.5:1 for text).
const GLYPH_LUMINANCE: [number, number] = [0.015, 0.055];

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

type Contour = number[];

/** A stroke piece cut into 1-3 overlapping parts, so the number of sub-paths per glyph varies. */
function splitPiece(pts: Pt[], rng: Rng): Pt[][] {
  if (pts.length < 3 || rng() < 0.4) return [pts];
  const cut = 1 + Math.floor(rng() * (pts.length - 2));
  // The parts share the vertex at the cut, so their outlines overlap there (no seam under nonzero fill).
  return [pts.slice(0, cut + 1), pts.slice(cut)];
}

/** The outline contours of one glyph, placed (affine, fitted) in its slot. */
function glyphContours(g: PreparedGlyph, slotX: number, l: Layout, rng: Rng, warpPad: number): Contour[] {
  const hw = between(rng, 0.72, 0.92);
  const pieces = g.pieces.flatMap((p) => splitPiece(p, rng));
  const polys = [...pieces.map((p) => outlinePiece(p, hw)), ...g.joints.map((p) => jointPolygon(p, hw, rng))];
  // Decoys: thinner copies of random stretches of the glyph's own strokes. They lie inside the
  // strokes, so the picture does not change, but how many outlines a glyph has and what they look
  // like no longer says which glyph it is.
  const decoys = 1 + Math.floor(rng() * 3);
  for (let k = 0; k < decoys; k++) {
    const piece = g.pieces[Math.floor(rng() * g.pieces.length)]!;
    const from = Math.floor(rng() * (piece.length - 1));
    const to = Math.min(piece.length, from + 2 + Math.floor(rng() * (piece.length - from - 1)));
    polys.push(outlinePiece(piece.slice(from, to), hw * between(rng, 0.35, 0.8)));
  }

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
  // Keep the jittered, warped outline strictly inside the slot: shrink if the rotated glyph is
  // too big, then place it randomly in the remaining room.
  const pad = VERTEX_JITTER + warpPad + 0.05;
  const availW = l.slotW - 2 * pad, availH = l.slotH - 2 * pad;
  const fit = Math.min(1, availW / (maxX - minX), availH / (maxY - minY));
  // Averaging two draws biases placement toward the slot centre, which reads better.
  const ox = slotX + pad + ((rng() + rng()) / 2) * (availW - (maxX - minX) * fit) - minX * fit;
  const oy = l.margin + pad + ((rng() + rng()) / 2) * (availH - (maxY - minY) * fit) - minY * fit;
  return polys.map((poly) => {
    const out = orient(poly);
    for (let i = 0; i < out.length; i += 2) {
      out[i] = out[i]! * fit + ox;
      out[i + 1] = out[i + 1]! * fit + oy;
    }
    return out;
  });
}

/** Points along a cubic Bézier. */
function bezier(p: number[], steps: number): Pt[] {
  const out: Pt[] = [];
  for (let i = 0; i <= steps; i++) {
    const t = i / steps, u = 1 - t;
    const k = [u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t];
    out.push([k[0]! * p[0]! + k[1]! * p[2]! + k[2]! * p[4]! + k[3]! * p[6]!, k[0]! * p[1]! + k[1]! * p[3]! + k[2]! * p[5]! + k[3]! * p[7]!]);
  }
  return out;
}

/**
 * Noise as filled outlines, so it joins the glyphs' path: thin curves across the canvas (cut into
 * parts), short stroke-like fragments about as thick as glyph strokes, and dots.
 */
function noiseContours(l: Layout, rng: Rng, curves: number): Contour[] {
  const { width: w, height: h } = l;
  const out: Contour[] = [];
  for (let k = 0; k < curves; k++) {
    const ctrl = [
      between(rng, 0, w * 0.25), between(rng, h * 0.1, h * 0.9),
      between(rng, w * 0.1, w * 0.5), between(rng, -h * 0.3, h * 1.3),
      between(rng, w * 0.5, w * 0.9), between(rng, -h * 0.3, h * 1.3),
      between(rng, w * 0.75, w), between(rng, h * 0.1, h * 0.9),
    ];
    const pts = bezier(ctrl, 24).map(([x, y]) => [Math.min(w - 0.5, Math.max(0.5, x)), Math.min(h - 0.5, Math.max(0.5, y))] as Pt);
    const hw = between(rng, 0.28, 0.42);
    // Cut into overlapping runs of random length: no single sub-path spans the canvas.
    for (let i = 0; i < pts.length - 1; ) {
      const n = 3 + Math.floor(rng() * 6);
      const run = pts.slice(i, Math.min(pts.length, i + n + 1));
      if (run.length >= 2) out.push(orient(outlinePiece(run, hw)));
      i += n;
    }
  }
  // Short stroke-like fragments: a template matcher cannot tell them from glyph parts by thickness.
  const fragments = 4 + Math.floor(rng() * 4);
  for (let k = 0; k < fragments; k++) {
    const x = between(rng, 2, w - 2), y = between(rng, 3, h - 3);
    const len = between(rng, 2.5, 5), ang = between(rng, 0, Math.PI), bend = between(rng, -0.6, 0.6);
    const pts: Pt[] = [0, 0.5, 1].map((t) => [
      x + Math.cos(ang) * len * (t - 0.5) - Math.sin(ang) * bend * (t === 0.5 ? 1 : 0),
      y + Math.sin(ang) * len * (t - 0.5) + Math.cos(ang) * bend * (t === 0.5 ? 1 : 0),
    ]);
    out.push(orient(outlinePiece(pts, between(rng, 0.7, 1.1))));
  }
  const dots = Math.round((w * h) / 400);
  for (let k = 0; k < dots; k++) {
    const cx = between(rng, 1, w - 1), cy = between(rng, 1, h - 1), r = between(rng, 0.35, 0.6);
    const n = 4 + Math.floor(rng() * 3), a0 = rng() * Math.PI;
    const dot: number[] = [];
    for (let i = 0; i < n; i++) dot.push(cx + r * Math.cos(a0 + (i * 2 * Math.PI) / n), cy + r * Math.sin(a0 + (i * 2 * Math.PI) / n));
    out.push(orient(dot));
  }
  return out;
}

/** A smooth random displacement of the whole picture (glyphs and noise alike). */
function makeWarp(l: Layout, rng: Rng) {
  const ax = between(rng, 0.4, 0.9), ay = between(rng, 0.8, 1.6);
  const fx = (2 * Math.PI) / between(rng, 14, 24), fy = (2 * Math.PI) / between(rng, 35, 70);
  const px = rng() * 2 * Math.PI, py = rng() * 2 * Math.PI;
  return {
    pad: Math.max(ax, ay),
    apply(c: Contour) {
      for (let i = 0; i < c.length; i += 2) {
        const x = c[i]!, y = c[i + 1]!;
        c[i] = Math.min(l.width, Math.max(0, x + ax * Math.sin(y * fx + px)));
        c[i + 1] = Math.min(l.height, Math.max(0, y + ay * Math.sin(x * fy + py)));
      }
    },
  };
}

/**
 * Adds a random number of jittered vertices along each edge and starts at a random vertex, so
 * the vertex count of an outline says nothing about its shape.
 */
function resample(c: Contour, rng: Rng, spacing: number): Contour {
  const n = c.length / 2;
  const start = Math.floor(rng() * n);
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const i = ((start + k) % n) * 2, j = ((start + k + 1) % n) * 2;
    const x0 = c[i]!, y0 = c[i + 1]!, x1 = c[j]!, y1 = c[j + 1]!;
    out.push(x0 + (rng() * 2 - 1) * VERTEX_JITTER, y0 + (rng() * 2 - 1) * VERTEX_JITTER);
    const len = Math.hypot(x1 - x0, y1 - y0);
    const extra = Math.floor((len / spacing) * rng() + (rng() < 0.25 ? 1 : 0));
    for (let e = 1; e <= extra; e++) {
      const t = e / (extra + 1);
      out.push(x0 + (x1 - x0) * t + (rng() * 2 - 1) * VERTEX_JITTER * 0.5, y0 + (y1 - y0) * t + (rng() * 2 - 1) * VERTEX_JITTER * 0.5);
    }
  }
  return out;
}

/**
 * Path data with a random mix of commands: absolute or relative lines, quadratic segments whose
 * control point sits on the chord (same shape, different markup), commands implied by repetition,
 * absolute or relative moves, Z or z.
 */
function pathData(contours: Contour[], rng: Rng): string {
  let d = "";
  let cx = 0, cy = 0;
  for (const c of contours) {
    const x0 = c[0]!, y0 = c[1]!;
    d += d && rng() < 0.5 ? `m${fmt(x0 - cx)} ${fmt(y0 - cy)}` : `M${fmt(x0)} ${fmt(y0)}`;
    // After m/M, SVG reads further pairs as implied l/L.
    let prev = "";
    cx = x0;
    cy = y0;
    for (let i = 2; i < c.length; i += 2) {
      const x = c[i]!, y = c[i + 1]!;
      const r = rng();
      let cmd: string, args: string;
      if (r < 0.35) {
        cmd = "L";
        args = `${fmt(x)} ${fmt(y)}`;
      } else if (r < 0.7) {
        cmd = "l";
        args = `${fmt(x - cx)} ${fmt(y - cy)}`;
      } else if (r < 0.85) {
        const t = between(rng, 0.3, 0.7);
        cmd = "Q";
        args = `${fmt(cx + (x - cx) * t)} ${fmt(cy + (y - cy) * t)} ${fmt(x)} ${fmt(y)}`;
      } else {
        const t = between(rng, 0.3, 0.7);
        cmd = "q";
        args = `${fmt((x - cx) * t)} ${fmt((y - cy) * t)} ${fmt(x - cx)} ${fmt(y - cy)}`;
      }
      d += (cmd === prev ? (args.startsWith("-") ? "" : " ") : cmd) + args;
      prev = cmd;
      // The next relative command starts from the rounded point the reader will have.
      cx = round1(x);
      cy = round1(y);
    }
    d += rng() < 0.5 ? "Z" : "z";
    // After Z the current point is the contour's start.
    cx = round1(x0);
    cy = round1(y0);
  }
  return d;
}

function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

export interface RenderedCaptcha {
  svg: string;
  /** Where each glyph ended up (reading order), for legibility tests; never sent to clients. */
  boxes: GlyphBox[];
}

/** Renders the captcha and reports where the glyphs are (tests use the boxes). */
export function renderCaptcha(text: string, rng: Rng, opts: CaptchaRenderOptions = {}): RenderedCaptcha {
  const l = layoutFor(text, opts);
  const noise = opts.noiseStrokes ?? 4;
  if (!(Number.isInteger(noise) && noise >= 0)) throw new RangeError("captcha: noiseStrokes must be a non-negative integer");
  const warp = makeWarp(l, rng);
  const contours: Contour[] = [];
  const boxes: GlyphBox[] = [];
  let i = 0;
  for (const ch of text) {
    const glyph = glyphContours(PREPARED.get(ch)!, l.margin + i++ * l.slotW, l, rng, warp.pad);
    const box = { minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
    for (const c of glyph) {
      warp.apply(c);
      for (let k = 0; k < c.length; k += 2) {
        box.minX = Math.min(box.minX, c[k]!);
        box.maxX = Math.max(box.maxX, c[k]!);
        box.minY = Math.min(box.minY, c[k + 1]!);
        box.maxY = Math.max(box.maxY, c[k + 1]!);
      }
    }
    boxes.push(box);
    contours.push(...glyph);
  }
  if (noise > 0) {
    for (const c of noiseContours(l, rng, noise)) {
      warp.apply(c);
      contours.push(c);
    }
  }
  const spacing = between(rng, 1.1, 2.2);
  const d = pathData(shuffle(contours.map((c) => resample(c, rng, spacing)), rng), rng);

  // One fill for everything: a gradient of dark colours at a random angle, so colour tells glyph
  // from noise no more than the markup does.
  const bg = `hsl(${Math.floor(rng() * 360)},35%,${Math.round(between(rng, 93, 97))}%)`;
  const stops = [0, 50, 100]
    .map((o) => `<stop offset="${o}%" stop-color="${colourWithLuminance(Math.floor(rng() * 360), Math.round(between(rng, 40, 70)), between(rng, ...GLYPH_LUMINANCE))}"/>`)
    .join("");
  const ang = rng() * Math.PI;
  const gx = fmt(50 + 50 * Math.cos(ang)), gy = fmt(50 + 50 * Math.sin(ang));
  const gx2 = fmt(50 - 50 * Math.cos(ang)), gy2 = fmt(50 - 50 * Math.sin(ang));
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${l.width}" height="${l.height}" viewBox="0 0 ${l.width} ${l.height}">` +
    `<defs><linearGradient id="f" x1="${gx}%" y1="${gy}%" x2="${gx2}%" y2="${gy2}%">${stops}</linearGradient></defs>` +
    `<rect width="${l.width}" height="${l.height}" fill="${bg}"/>` +
    `<path d="${d}" fill="url(#f)"/>` +
    `</svg>`;
  return { svg, boxes };
}

/** Returns SVG markup (not base64). Throws on characters outside CAPTCHA_ALPHABET. */
export function renderCaptchaSvg(text: string, rng: Rng, opts: CaptchaRenderOptions = {}): string {
  return renderCaptcha(text, rng, opts).svg;
}
