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
//
// And a person must read it at its natural size, 240x80 CSS pixels (issue 25;
// bench/captcha-sheet.ts makes the sheet that was read): one slant for the
// whole word, neighbours touching but rarely hiding each other, round speckles
// rather than bar-like clutter, widths that vary more than shapes do, and no
// character that the distortion turns into another (CAPTCHA_ALPHABET).

import { GLYPHS, type Pt, type Stroke } from "./captcha-glyphs.ts";

/**
 * No look-alikes: 0/O, 1/I/L-lowercase, 5/S, 2/Z, 8/B, U/V, 9/g are all left out, and so are the
 * characters a reader confused most at 1x under the distortion (issue 25): 4 (A), 6 and G (C, Q),
 * 7 (T), F (E, P), X and Y (K, H). Sixteen characters, five of them: 16^5 ≈ 1M answers.
 */
export const CAPTCHA_ALPHABET = "ACDEHJKLMNPQRTW3";

/** Uniform in [0, 1). Injected so callers choose the entropy source and tests can seed it. */
export type Rng = () => number;

/** The layout's size in user units (the viewBox): every coordinate of the picture is in these. */
const LAYOUT_WIDTH = 120;
const LAYOUT_HEIGHT = 40;
/**
 * CSS pixels per user unit the image asks to be shown at. At 120x40 (scale 1) a reader got 9 of 20
 * right; at 240x80 the glyphs are big enough to read at 1x (issue 25). The markup is the same
 * whatever the scale, so what a program reads from it does not change.
 */
const DISPLAY_SCALE = 2;
/** The natural size of a served captcha, in CSS pixels. */
export const CAPTCHA_WIDTH = LAYOUT_WIDTH * DISPLAY_SCALE;
export const CAPTCHA_HEIGHT = LAYOUT_HEIGHT * DISPLAY_SCALE;

export interface CaptchaRenderOptions {
  /** Layout size in user units (default 120x40). */
  width?: number;
  height?: number;
  /** Natural size = layout size x scale (default 2). */
  scale?: number;
  noiseStrokes?: number;
  /** Whole glyph outlines drawn twice with opposite windings (invisible); default: one per character. */
  cancelledGlyphs?: number;
  /**
   * Tests only, to see what the cancelled glyphs do to the pixels (nothing) with the rest of the
   * picture unchanged: "omit" leaves out both copies, "show" only the cancelling ones.
   */
  decoys?: "omit" | "show";
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

/** `minLen`..`maxLen` characters of CAPTCHA_ALPHABET; five by default, so the smaller alphabet still gives ~1M answers. */
export function randomCaptchaText(rng: Rng, minLen = 5, maxLen = 5): string {
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
  /** Height available to glyphs (canvas less the margins). */
  innerH: number;
}

function layoutFor(text: string, opts: CaptchaRenderOptions): Layout {
  const width = opts.width ?? LAYOUT_WIDTH;
  const height = opts.height ?? LAYOUT_HEIGHT;
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) {
    throw new RangeError("captcha: width and height must be positive numbers");
  }
  if (text.length === 0) throw new Error("captcha: text must not be empty");
  for (const ch of text) {
    if (!PREPARED.has(ch)) throw new Error(`captcha: character ${JSON.stringify(ch)} is not in the alphabet`);
  }
  const margin = Math.max(1, Math.min(width, height) * 0.05);
  return { width, height, margin, innerH: height - 2 * margin };
}

type Contour = number[];

/** A stroke piece cut into 1-3 overlapping parts, so the number of sub-paths per glyph varies. */
function splitPiece(pts: Pt[], rng: Rng): Pt[][] {
  if (pts.length < 3 || rng() < 0.4) return [pts];
  const cut = 1 + Math.floor(rng() * (pts.length - 2));
  // The parts share the vertex at the cut, so their outlines overlap there (no seam under nonzero fill).
  return [pts.slice(0, cut + 1), pts.slice(cut)];
}

interface GlyphShape {
  contours: Contour[];
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
}

/**
 * The outline contours of one glyph around its own centre, in user units: random stroke width,
 * a random affine (scale, shear, rotation) and a random smooth bend of its own, so no two
 * instances of a character have the same shape (template matching on the picture needs a
 * template for every bend), plus decoys inside the strokes.
 */
/** The slant every glyph of one captcha shares: shear (italic) and rotation, in radians. */
interface Slant {
  shear: number;
  rot: number;
}

function glyphShape(g: PreparedGlyph, height: number, rng: Rng, word: Slant): GlyphShape {
  const hw = between(rng, 0.62, 1.0);
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

  const s = (height * between(rng, 0.7, 0.9)) / GRID_H;
  // Widths vary more than heights: cutting the picture at equal spacing misses the glyphs, while
  // a reader hardly notices a narrow N or a wide E.
  const sx = s * between(rng, 0.62, 1.32);
  const sy = s * between(rng, 0.9, 1.1);
  const shear = word.shear + between(rng, -0.1, 0.1);
  const rot = word.rot + between(rng, -0.12, 0.12);
  const cos = Math.cos(rot), sin = Math.sin(rot);
  const a = cos * sx, b = sin * sx;
  const c = (cos * shear - sin) * sy, d = (sin * shear + cos) * sy;
  // The bend: each axis displaced by a sine of the other, up to ~9 % of the glyph's height.
  const bx = between(rng, 0.3, 0.9) * (rng() < 0.5 ? -1 : 1), by = between(rng, 0.3, 0.8) * (rng() < 0.5 ? -1 : 1);
  const fx = (2 * Math.PI) / between(rng, 10, 18), fy = (2 * Math.PI) / between(rng, 8, 14);
  const px = rng() * 2 * Math.PI, py = rng() * 2 * Math.PI;

  const shape: GlyphShape = { contours: [], minX: Infinity, minY: Infinity, maxX: -Infinity, maxY: -Infinity };
  for (const poly of polys) {
    for (let i = 0; i < poly.length; i += 2) {
      const x0 = poly[i]! - GRID_CX, y0 = poly[i + 1]! - GRID_CY;
      const x = x0 + bx * Math.sin(y0 * fx + px), y = y0 + by * Math.sin(x0 * fy + py);
      const tx = a * x + c * y, ty = b * x + d * y;
      poly[i] = tx;
      poly[i + 1] = ty;
      if (tx < shape.minX) shape.minX = tx;
      if (tx > shape.maxX) shape.maxX = tx;
      if (ty < shape.minY) shape.minY = ty;
      if (ty > shape.maxY) shape.maxY = ty;
    }
    shape.contours.push(orient(poly));
  }
  return shape;
}

function moveShape(shape: GlyphShape, k: number, ox: number, oy: number): Contour[] {
  for (const c of shape.contours) {
    for (let i = 0; i < c.length; i += 2) {
      c[i] = c[i]! * k + ox;
      c[i + 1] = c[i + 1]! * k + oy;
    }
  }
  return shape.contours;
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
  const curve = (ctrl: number[], hw: number) => {
    const pts = bezier(ctrl, 24).map(([x, y]) => [Math.min(w - 0.5, Math.max(0.5, x)), Math.min(h - 0.5, Math.max(0.5, y))] as Pt);
    // Cut into overlapping runs of random length: no single sub-path spans the canvas.
    for (let i = 0; i < pts.length - 1; ) {
      const n = 3 + Math.floor(rng() * 6);
      const run = pts.slice(i, Math.min(pts.length, i + n + 1));
      if (run.length >= 2) out.push(orient(outlinePiece(run, hw)));
      i += n;
    }
  };
  for (let k = 0; k < curves; k++) {
    curve([
      between(rng, 0, w * 0.25), between(rng, h * 0.1, h * 0.9),
      between(rng, w * 0.1, w * 0.5), between(rng, -h * 0.3, h * 1.3),
      between(rng, w * 0.5, w * 0.9), between(rng, -h * 0.3, h * 1.3),
      between(rng, w * 0.75, w), between(rng, h * 0.1, h * 0.9),
    ], between(rng, 0.22, 0.32));
  }
  // One stroke nearly as thick as the glyphs' through the text: no thickness threshold removes it
  // without eating the glyphs, and it joins neighbouring glyphs into one blob.
  curve([
    between(rng, 0, w * 0.08), between(rng, h * 0.3, h * 0.7),
    between(rng, w * 0.2, w * 0.45), between(rng, h * 0.1, h * 0.9),
    between(rng, w * 0.55, w * 0.8), between(rng, h * 0.1, h * 0.9),
    between(rng, w * 0.92, w), between(rng, h * 0.3, h * 0.7),
  ], between(rng, 0.6, 0.85));
  // Short stroke-like fragments: a template matcher cannot tell them from glyph parts by thickness.
  // Few of them: to a reader they look like a bar that turns C into E or P into R.
  const fragments = Math.floor(rng() * 3);
  for (let k = 0; k < fragments; k++) {
    const x = between(rng, 2, w - 2), y = between(rng, 3, h - 3);
    const len = between(rng, 2.5, 5), ang = between(rng, 0, Math.PI), bend = between(rng, -0.6, 0.6);
    const pts: Pt[] = [0, 0.5, 1].map((t) => [
      x + Math.cos(ang) * len * (t - 0.5) - Math.sin(ang) * bend * (t === 0.5 ? 1 : 0),
      y + Math.sin(ang) * len * (t - 0.5) + Math.cos(ang) * bend * (t === 0.5 ? 1 : 0),
    ]);
    out.push(orient(outlinePiece(pts, between(rng, 0.7, 1.1))));
  }
  // Speckles as thick as a stroke (60 on 120x40): an opening that keeps the glyphs keeps them too, so
  // they blur what a pixel classifier sees of each glyph and fill the gaps a segmenter cuts at; a
  // reader looks past round dots.
  const dots = Math.round((w * h) / 80);
  for (let k = 0; k < dots; k++) {
    const cx = between(rng, 1, w - 1), cy = between(rng, 1, h - 1), r = between(rng, 0.7, 1.2);
    const n = 4 + Math.floor(rng() * 3), a0 = rng() * Math.PI;
    const dot: number[] = [];
    for (let i = 0; i < n; i++) dot.push(cx + r * Math.cos(a0 + (i * 2 * Math.PI) / n), cy + r * Math.sin(a0 + (i * 2 * Math.PI) / n));
    out.push(orient(dot));
  }
  return out;
}

interface Warp {
  pad: number;
  apply(c: Contour): void;
}

/** A smooth random displacement of the whole picture (glyphs and noise alike). */
function makeWarp(l: Layout, rng: Rng): Warp {
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
    cx = round1(x0);
    cy = round1(y0);
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
      } else {
        // A quadratic segment whose control point lies on the chord, on the 0.1 grid: exactly the
        // same straight edge as a line (so cancelling copies still cancel), written differently.
        const dx = Math.round((x - cx) * 10), dy = Math.round((y - cy) * 10);
        const g = gcd(Math.abs(dx), Math.abs(dy));
        const m = g < 2 ? 0 : 1 + Math.floor(rng() * (g - 1));
        const qx = (dx * m) / g / 10, qy = (dy * m) / g / 10;
        if (m === 0) {
          cmd = r < 0.85 ? "L" : "l";
          args = r < 0.85 ? `${fmt(x)} ${fmt(y)}` : `${fmt(x - cx)} ${fmt(y - cy)}`;
        } else if (r < 0.85) {
          cmd = "Q";
          args = `${fmt(cx + qx)} ${fmt(cy + qy)} ${fmt(x)} ${fmt(y)}`;
        } else {
          cmd = "q";
          args = `${fmt(qx)} ${fmt(qy)} ${fmt(x - cx)} ${fmt(y - cy)}`;
        }
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

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

function shuffle<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * What the SVG draws, as values: the canvas, its background, the ink gradient and the outlines
 * under the nonzero fill rule. captcha-raster.ts paints the same picture as pixels (for clients
 * that can only show raster images: the RuoYi dialect).
 */
export interface CaptchaScene {
  width: number;
  height: number;
  /** `hsl(h,s%,l%)` */
  background: string;
  /** The gradient's stops at 0, 50 and 100 % (`hsl(…)`), along `from` → `to` in canvas units. */
  stops: [string, string, string];
  from: [number, number];
  to: [number, number];
  /** Closed outlines, each `[x0, y0, x1, y1, …]`, filled with the nonzero rule. */
  contours: number[][];
}

export interface RenderedCaptcha {
  svg: string;
  scene: CaptchaScene;
  /** Where each glyph ended up (reading order), for legibility tests; never sent to clients. */
  boxes: GlyphBox[];
}

/**
 * Places the glyphs left to right, closer than their boxes: neighbours touch or overlap a little
 * and the gaps vary, so neither equal spacing nor empty columns cut the picture into glyphs.
 */
function placeGlyphs(shapes: GlyphShape[], l: Layout, pad: number, rng: Rng): Contour[][] {
  const width = (sh: GlyphShape) => sh.maxX - sh.minX;
  const gaps = shapes.slice(1).map((sh, i) => between(rng, -0.16, 0.06) * Math.min(width(sh), width(shapes[i]!)));
  const total = shapes.reduce((a, sh) => a + width(sh), 0) + gaps.reduce((a, g) => a + g, 0);
  const availW = l.width - 2 * (l.margin + pad), availH = l.innerH - 2 * pad;
  const k = Math.min(1, availW / total);
  let x = l.margin + pad + rng() * (availW - total * k);
  return shapes.map((sh, i) => {
    // A glyph too tall for the canvas (rotated) shrinks alone, centred where it would have been.
    const kk = Math.min(k, availH / (sh.maxY - sh.minY));
    const oy = l.margin + pad + rng() * (availH - (sh.maxY - sh.minY) * kk) - sh.minY * kk;
    const placed = moveShape(sh, kk, x + ((k - kk) * width(sh)) / 2 - sh.minX * kk, oy);
    x += (width(sh) + (gaps[i] ?? 0)) * k;
    return placed;
  });
}

const reversed = (c: Contour): Contour => {
  const out: number[] = [];
  for (let i = c.length - 2; i >= 0; i -= 2) out.push(c[i]!, c[i + 1]!);
  return out;
};

/**
 * Whole outlines of other characters, each drawn twice with opposite windings: under the nonzero
 * fill rule the two copies cancel, so they add nothing to the picture, but to a program that reads
 * outlines they are as glyph-like as the glyphs (they ARE glyph outlines, at glyph size, warped and
 * resampled like them, among the glyphs). One copy gets extra vertices on its edges, so the pair is
 * not one vertex list written twice; which copy runs which way is random, like the glyphs' own.
 */
function cancelledGlyphs(l: Layout, count: number, rng: Rng, warp: Warp, spacing: number, word: Slant): Contour[][] {
  const pairs: Contour[][] = [];
  for (let n = 0; n < count; n++) {
    const ch = CAPTCHA_ALPHABET[Math.floor(rng() * CAPTCHA_ALPHABET.length)]!;
    // Slanted like the word, or the slant alone would tell them from the glyphs.
    const sh = glyphShape(PREPARED.get(ch)!, l.innerH, rng, word);
    const k = between(rng, 0.75, 1);
    const ox = between(rng, l.margin, l.width - l.margin - (sh.maxX - sh.minX) * k) - sh.minX * k;
    const oy = between(rng, l.margin, l.height - l.margin - (sh.maxY - sh.minY) * k) - sh.minY * k;
    for (const c of moveShape(sh, k, ox, oy)) {
      warp.apply(c);
      // Rounded first: the markup keeps one decimal, and both copies must keep exactly these points.
      const base = resample(c, rng, spacing).map(round1);
      const withExtra: number[] = [];
      for (let i = 0; i < base.length; i += 2) {
        withExtra.push(base[i]!, base[i + 1]!);
        const j = (i + 2) % base.length;
        // Only where the midpoint is exactly on the 0.1 grid: a rounded one would bend the edge.
        const dx = Math.round((base[j]! - base[i]!) * 10), dy = Math.round((base[j + 1]! - base[i + 1]!) * 10);
        if (dx % 2 === 0 && dy % 2 === 0 && rng() < 0.7) withExtra.push(round1(base[i]! + dx / 20), round1(base[i + 1]! + dy / 20));
      }
      pairs.push(rng() < 0.5 ? [withExtra, rotateStart(reversed(base), rng)] : [reversed(withExtra), rotateStart(base, rng)]);
    }
  }
  return pairs;
}

function rotateStart(c: Contour, rng: Rng): Contour {
  const start = 2 * Math.floor(rng() * (c.length / 2));
  return [...c.slice(start), ...c.slice(0, start)];
}

/** Renders the captcha and reports where the glyphs are (tests use the boxes). */
export function renderCaptcha(text: string, rng: Rng, opts: CaptchaRenderOptions = {}): RenderedCaptcha {
  const l = layoutFor(text, opts);
  const scale = opts.scale ?? DISPLAY_SCALE;
  if (!(scale > 0 && Number.isFinite(scale))) throw new RangeError("captcha: scale must be a positive number");
  const noise = opts.noiseStrokes ?? 1;
  if (!(Number.isInteger(noise) && noise >= 0)) throw new RangeError("captcha: noiseStrokes must be a non-negative integer");
  const warp = makeWarp(l, rng);
  const contours: Contour[] = [];
  const boxes: GlyphBox[] = [];
  // One slant for the whole word (italic and tilt), each glyph off it by a little: a reader reads a
  // slanted word as easily as an upright one, and far better than letters leaning every way.
  const word = { shear: between(rng, -0.35, 0.35), rot: between(rng, -0.2, 0.2) };
  const shapes = [...text].map((ch) => glyphShape(PREPARED.get(ch)!, l.innerH, rng, word));
  for (const glyph of placeGlyphs(shapes, l, VERTEX_JITTER + warp.pad + 0.05, rng)) {
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
    // Which way a glyph's outlines run is random (all of one glyph alike, so they still union):
    // winding direction says nothing about what is glyph, noise or a cancelled decoy.
    const flip = rng() < 0.5;
    contours.push(...(flip ? glyph.map(reversed) : glyph));
  }
  if (noise > 0) {
    for (const c of noiseContours(l, rng, noise)) {
      warp.apply(c);
      contours.push(rng() < 0.5 ? c : reversed(c));
    }
  }
  const spacing = between(rng, 1.1, 2.2);
  const outlines = contours.map((c) => resample(c, rng, spacing));
  const pairs = new Set<Contour>();
  for (const [shown, cancelling] of cancelledGlyphs(l, opts.cancelledGlyphs ?? text.length, rng, warp, spacing, word)) {
    outlines.push(shown!, cancelling!);
    if (opts.decoys !== "show") pairs.add(shown!);
    pairs.add(cancelling!);
  }
  shuffle(outlines, rng);

  // One fill for everything: a gradient of dark colours at a random angle, so colour tells glyph
  // from noise no more than the markup does.
  const bg = `hsl(${Math.floor(rng() * 360)},35%,${Math.round(between(rng, 93, 97))}%)`;
  const colours = [0, 50, 100].map(() => colourWithLuminance(Math.floor(rng() * 360), Math.round(between(rng, 40, 70)), between(rng, ...GLYPH_LUMINANCE)));
  const stops = [0, 50, 100].map((o, i) => `<stop offset="${o}%" stop-color="${colours[i]}"/>`).join("");
  const ang = rng() * Math.PI;
  // In canvas units, not the path's bounding box: the colours then do not depend on where the
  // (cancelled) decoys reach.
  const gx = fmt(l.width * (0.5 + 0.5 * Math.cos(ang))), gy = fmt(l.height * (0.5 + 0.5 * Math.sin(ang)));
  const gx2 = fmt(l.width * (0.5 - 0.5 * Math.cos(ang))), gy2 = fmt(l.height * (0.5 - 0.5 * Math.sin(ang)));
  const drawn = opts.decoys ? outlines.filter((c) => !pairs.has(c)) : outlines;
  const d = pathData(drawn, rng);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${fmt(l.width * scale)}" height="${fmt(l.height * scale)}" viewBox="0 0 ${l.width} ${l.height}">` +
    `<defs><linearGradient id="f" gradientUnits="userSpaceOnUse" x1="${gx}" y1="${gy}" x2="${gx2}" y2="${gy2}">${stops}</linearGradient></defs>` +
    `<rect width="${l.width}" height="${l.height}" fill="${bg}"/>` +
    `<path d="${d}" fill="url(#f)"/>` +
    `</svg>`;
  const scene: CaptchaScene = {
    width: l.width,
    height: l.height,
    background: bg,
    stops: colours as [string, string, string],
    from: [Number(gx), Number(gy)],
    to: [Number(gx2), Number(gy2)],
    contours: drawn,
  };
  return { svg, scene, boxes };
}

/** Returns SVG markup (not base64). Throws on characters outside CAPTCHA_ALPHABET. */
export function renderCaptchaSvg(text: string, rng: Rng, opts: CaptchaRenderOptions = {}): string {
  return renderCaptcha(text, rng, opts).svg;
}
