import { encode } from 'fast-png';
import type { CaptchaScene } from './captcha-render.ts';

/**
 * The captcha as a PNG, for clients that can only show raster images (RuoYi-Vue3 prefixes every
 * captcha with `data:image/gif;base64,`, under which an SVG does not decode). The picture is the
 * SVG's own scene (captcha-render.ts): the same outlines under the nonzero fill rule, the same
 * background and ink gradient, so it is exactly as hard to read as the SVG a browser would draw.
 * Pixels are filled here (SCALE× the SVG's size, SS×SS samples per pixel for smooth edges); the
 * file format is fast-png's (a maintained encoder in plain JavaScript: Bun, Deno, Node, workerd).
 */
const SCALE = 2;
const SS = 4;

type Rgb = [number, number, number];

/** `hsl(h,s%,l%)` → sRGB 0-255. */
export function hslToRgb(text: string): Rgb {
  const m = /^hsl\(\s*([\d.]+)\s*,\s*([\d.]+)%\s*,\s*([\d.]+)%\s*\)$/.exec(text);
  if (!m) throw new Error(`captcha-raster: not an hsl() colour: ${text}`);
  const h = Number(m[1]), s = Number(m[2]) / 100, l = Number(m[3]) / 100;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/** Coverage (0..1) of each pixel by the outlines under the nonzero rule, W×H at SCALE. */
function coverage(scene: CaptchaScene, w: number, h: number): Float32Array {
  const cover = new Float32Array(w * h);
  const k = SCALE * SS;
  const rows = h * SS;
  // Edges bucketed by the sample rows they cross.
  const byRow: { x0: number; y0: number; dxdy: number; dir: number }[][] = Array.from({ length: rows }, () => []);
  for (const c of scene.contours) {
    const n = c.length / 2;
    for (let i = 0; i < n; i++) {
      const j = (i + 1) % n;
      const x0 = c[2 * i]! * k, y0 = c[2 * i + 1]! * k, x1 = c[2 * j]! * k, y1 = c[2 * j + 1]! * k;
      if (y0 === y1) continue;
      const edge = { x0, y0, dxdy: (x1 - x0) / (y1 - y0), dir: y1 > y0 ? 1 : -1 };
      const lo = Math.max(0, Math.ceil(Math.min(y0, y1) - 0.5)), hi = Math.min(rows - 1, Math.floor(Math.max(y0, y1) - 0.5));
      for (let r = lo; r <= hi; r++) {
        const y = r + 0.5;
        if (y >= Math.min(y0, y1) && y < Math.max(y0, y1)) byRow[r]!.push(edge);
      }
    }
  }
  const weight = 1 / (SS * SS);
  const crossings: { x: number; dir: number }[] = [];
  for (let r = 0; r < rows; r++) {
    const edges = byRow[r]!;
    if (edges.length === 0) continue;
    const y = r + 0.5;
    crossings.length = 0;
    for (const e of edges) crossings.push({ x: e.x0 + (y - e.y0) * e.dxdy, dir: e.dir });
    crossings.sort((a, b) => a.x - b.x);
    let winding = 0;
    const py = Math.floor(r / SS);
    for (let i = 0; i < crossings.length - 1; i++) {
      winding += crossings[i]!.dir;
      if (winding === 0) continue;
      // Samples at x + 0.5 inside [start, end).
      const start = Math.max(0, Math.ceil(crossings[i]!.x - 0.5)), end = Math.min(w * SS, Math.ceil(crossings[i + 1]!.x - 0.5));
      for (let sx = start; sx < end; sx++) cover[py * w + Math.floor(sx / SS)]! += weight;
    }
  }
  return cover;
}

/** RGBA pixels of the scene at SCALE. */
export function rasterCaptcha(scene: CaptchaScene): { width: number; height: number; data: Uint8Array } {
  const w = Math.round(scene.width * SCALE), h = Math.round(scene.height * SCALE);
  const cover = coverage(scene, w, h);
  const bg = hslToRgb(scene.background);
  const stops = scene.stops.map(hslToRgb);
  const [fx, fy] = scene.from, [tx, ty] = scene.to;
  const gx = tx - fx, gy = ty - fy, len2 = gx * gx + gy * gy || 1;
  const data = new Uint8Array(w * h * 4);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const a = Math.min(1, cover[i]!);
      // The ink at this point of the gradient (userSpaceOnUse, pad: clamped), stops at 0, .5, 1.
      const t = Math.min(1, Math.max(0, (((x + 0.5) / SCALE - fx) * gx + ((y + 0.5) / SCALE - fy) * gy) / len2));
      const [s0, s1] = t < 0.5 ? [stops[0]!, stops[1]!] : [stops[1]!, stops[2]!];
      const u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
      for (let ch = 0; ch < 3; ch++) {
        const ink = s0[ch]! + (s1[ch]! - s0[ch]!) * u;
        data[i * 4 + ch] = Math.round(bg[ch]! * (1 - a) + ink * a);
      }
      data[i * 4 + 3] = 255;
    }
  }
  return { width: w, height: h, data };
}

/** The scene as PNG bytes. */
export function captchaPng(scene: CaptchaScene): Uint8Array {
  const { width, height, data } = rasterCaptcha(scene);
  return encode({ width, height, data, channels: 4, depth: 8 });
}
