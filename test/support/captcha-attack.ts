import { CAPTCHA_ALPHABET, renderCaptchaSvg, type CaptchaRenderOptions, type Rng } from '../../src/modules/auth/captcha-render.ts';

/**
 * The markup-reading attack on our captcha, as a script would run it: no picture is looked at.
 * It parses the SVG's path data, throws away what looks like noise (long or thin outlines), splits
 * the rest into glyphs (per element when there is one per glyph, else by position), and matches
 * each glyph's structure — how many outlines, how many vertices each has after simplification,
 * which commands draw it — against templates built from our own glyph table by running our own
 * renderer (the attacker has the source). The 40-line version of this read 300/300 of the
 * old captchas.
 */
export type Contour = { pts: [number, number][]; cmds: string; element: number };

const TOKEN = /[MmLlQqHhVvZzCcSsTtAa]|-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?/g;
const ARITY: Record<string, number> = { M: 2, L: 2, H: 1, V: 1, Q: 4, T: 2, C: 6, S: 4, A: 7, Z: 0 };

/** Every sub-path of every <path>, with its vertices (segment end points) and command letters. */
export function parseContours(svg: string): Contour[] {
  const out: Contour[] = [];
  let element = 0;
  for (const m of svg.matchAll(/<path\b[^>]*\sd="([^"]+)"/g)) {
    const tokens = m[1]!.match(TOKEN) ?? [];
    let cmd = '';
    let cx = 0, cy = 0, sx = 0, sy = 0;
    let cur: Contour | null = null;
    for (let i = 0; i < tokens.length; ) {
      if (/[a-z]/i.test(tokens[i]!)) cmd = tokens[i++]!;
      else if (!cmd) break;
      const up = cmd.toUpperCase();
      const rel = cmd !== up;
      const args = tokens.slice(i, i + ARITY[up]!).map(Number);
      i += ARITY[up]!;
      if (up === 'Z') {
        cx = sx;
        cy = sy;
        if (cur) out.push(cur);
        cur = null;
        continue;
      }
      let x = cx, y = cy;
      if (up === 'H') x = (rel ? cx : 0) + args[0]!;
      else if (up === 'V') y = (rel ? cy : 0) + args[0]!;
      else {
        x = (rel ? cx : 0) + args[args.length - 2]!;
        y = (rel ? cy : 0) + args[args.length - 1]!;
      }
      if (up === 'M') {
        if (cur) out.push(cur);
        cur = { pts: [[x, y]], cmds: 'M', element };
        sx = x;
        sy = y;
        cmd = rel ? 'l' : 'L';
      } else {
        cur ??= { pts: [[cx, cy]], cmds: 'M', element };
        cur.pts.push([x, y]);
        cur.cmds += up;
      }
      cx = x;
      cy = y;
    }
    if (cur) out.push(cur);
    element++;
  }
  return out;
}

/** Douglas-Peucker on a closed outline: undoes added collinear vertices and small jitter. */
function simplify(pts: [number, number][], eps: number): number {
  const keep = new Set<number>([0, pts.length - 1]);
  const rec = (a: number, b: number) => {
    let worst = -1, at = -1;
    const [x0, y0] = pts[a]!, [x1, y1] = pts[b]!;
    const len = Math.hypot(x1 - x0, y1 - y0) || 1;
    for (let i = a + 1; i < b; i++) {
      const [x, y] = pts[i]!;
      const dist = Math.abs((x1 - x0) * (y0 - y) - (x0 - x) * (y1 - y0)) / len;
      if (dist > worst) [worst, at] = [dist, i];
    }
    if (worst > eps) {
      keep.add(at);
      rec(a, at);
      rec(at, b);
    }
  };
  rec(0, pts.length - 1);
  return keep.size;
}

function box(c: Contour) {
  const xs = c.pts.map((p) => p[0]), ys = c.pts.map((p) => p[1]);
  return { minX: Math.min(...xs), maxX: Math.max(...xs), minY: Math.min(...ys), maxY: Math.max(...ys) };
}

/** Half the stroke thickness: area / perimeter of the outline. */
function thickness(c: Contour): number {
  let area = 0, per = 0;
  const n = c.pts.length;
  for (let i = 0; i < n; i++) {
    const [x0, y0] = c.pts[i]!, [x1, y1] = c.pts[(i + 1) % n]!;
    area += x0 * y1 - x1 * y0;
    per += Math.hypot(x1 - x0, y1 - y0);
  }
  return Math.abs(area / 2) / (per || 1);
}

/** Glyph groups in reading order: one per element when the markup has one per glyph, else by position. */
export function splitGlyphs(svg: string, count: number, width = 120, height = 40): Contour[][] {
  const all = parseContours(svg);
  const elements = new Set(all.map((c) => c.element));
  const keep = all.filter((c) => {
    const b = box(c);
    return b.maxX - b.minX < width * 0.3 && b.maxY - b.minY < height * 0.95 && c.pts.length >= 3 && thickness(c) > 0.5;
  });
  if (elements.size >= count + 1) {
    // One element per glyph (plus noise elements): the elements whose outlines are thickest are the glyphs.
    const byElement = [...elements].map((e) => keep.filter((c) => c.element === e)).filter((g) => g.length > 0);
    return byElement.slice(0, count);
  }
  // One path: order outlines by centre and cut at the count-1 widest gaps.
  const centred = keep.map((c) => ({ c, x: (box(c).minX + box(c).maxX) / 2 })).sort((a, b) => a.x - b.x);
  const gaps = centred.slice(1).map((e, i) => ({ i: i + 1, gap: e.x - centred[i]!.x })).sort((a, b) => b.gap - a.gap);
  const cuts = gaps.slice(0, count - 1).map((g) => g.i).sort((a, b) => a - b);
  const groups: Contour[][] = [];
  let from = 0;
  for (const cut of [...cuts, centred.length]) {
    groups.push(centred.slice(from, cut).map((e) => e.c));
    from = cut;
  }
  return groups;
}

/**
 * Where the glyph's outlines sit and which way they run, from their coordinates: a 3x3 grid of
 * the glyph's box times 4 directions, weighted by outline length (the stroke skeleton, roughly).
 */
function layout(group: Contour[]): number[] {
  const all = group.flatMap((c) => c.pts);
  const minX = Math.min(...all.map((p) => p[0])), maxX = Math.max(...all.map((p) => p[0]));
  const minY = Math.min(...all.map((p) => p[1])), maxY = Math.max(...all.map((p) => p[1]));
  const w = maxX - minX || 1, h = maxY - minY || 1;
  const hist = new Array<number>(36).fill(0);
  for (const c of group) {
    const n = c.pts.length;
    const mx = c.pts.reduce((a, p) => a + p[0], 0) / n, my = c.pts.reduce((a, p) => a + p[1], 0) / n;
    let sxx = 0, syy = 0, sxy = 0;
    for (const [x, y] of c.pts) {
      sxx += (x - mx) ** 2;
      syy += (y - my) ** 2;
      sxy += (x - mx) * (y - my);
    }
    const angle = (0.5 * Math.atan2(2 * sxy, sxx - syy) + Math.PI) % Math.PI;
    const length = Math.sqrt((sxx + syy) / n) / h;
    const gx = Math.min(2, Math.floor(((mx - minX) / w) * 3)), gy = Math.min(2, Math.floor(((my - minY) / h) * 3));
    hist[(gy * 3 + gx) * 4 + (Math.round(angle / (Math.PI / 4)) % 4)]! += length * 10;
  }
  return hist;
}

/**
 * 'structure' is the markup attack of the issue: outline count, vertex counts (raw and
 * simplified), command pattern. 'geometry' adds where the outlines sit and run, which is reading
 * the shapes as a picture (vector OCR). Both are test bounds (test/captcha-attack.test.ts); the
 * picture-level attack is test/support/captcha-raster.ts.
 */
export type AttackMode = 'structure' | 'geometry';

/** What the attack knows about a glyph. */
export function signature(group: Contour[], mode: AttackMode = 'structure'): { key: string; vector: number[] } {
  // Raw vertex counts identified the old captcha's letters outright; simplified counts survive
  // added collinear points and jitter.
  const raw = group.map((c) => c.pts.length).sort((a, b) => a - b);
  const counts = group.map((c) => simplify(c.pts, 0.6)).sort((a, b) => a - b);
  const cmds = group.map((c) => c.cmds).sort().join('|');
  const vector = [group.length, counts.reduce((a, b) => a + b, 0) / 8, ...(mode === 'geometry' ? layout(group) : counts)];
  return { key: `${raw.join(',')}:${cmds}`, vector };
}

/** Templates from our own glyph table, rendered by our own renderer. */
export function buildTemplates(rng: Rng, perChar = 30, mode: AttackMode = 'structure', opts: CaptchaRenderOptions = {}) {
  const exact = new Map<string, Map<string, number>>();
  const vectors: { ch: string; v: number[] }[] = [];
  for (let r = 0; r < perChar; r++) {
    for (const ch of CAPTCHA_ALPHABET) {
      const svg = renderCaptchaSvg(ch.repeat(4), rng, opts);
      for (const g of splitGlyphs(svg, 4)) {
        const s = signature(g, mode);
        const votes = exact.get(s.key) ?? new Map<string, number>();
        votes.set(ch, (votes.get(ch) ?? 0) + 1);
        exact.set(s.key, votes);
        vectors.push({ ch, v: s.vector });
      }
    }
  }
  return { exact, vectors, mode };
}

/** Reads a captcha of `count` characters; '?' where nothing matched. */
export function readCaptcha(svg: string, count: number, t: ReturnType<typeof buildTemplates>): string {
  return splitGlyphs(svg, count)
    .map((g) => {
      const s = signature(g, t.mode);
      const votes = t.exact.get(s.key);
      if (votes) return [...votes].sort((a, b) => b[1] - a[1])[0]![0];
      // Nearest template by structure when no exact match exists.
      let best = '?', bestD = Infinity;
      for (const { ch, v } of t.vectors) {
        let d = 0;
        for (let k = 0; k < Math.max(v.length, s.vector.length); k++) d += Math.abs((v[k] ?? 0) - (s.vector[k] ?? 0));
        if (d < bestD) [best, bestD] = [ch, d];
      }
      return best;
    })
    .join('');
}
