// Captcha glyphs as centreline strokes on a 0..10 x 0..14 grid (y grows down).
// The renderer thickens every stroke into a filled outline polygon, so the
// service never depends on a font or on the client's text rendering. Shapes
// are deliberately plain and geometric: all distortion is added per instance
// by the renderer, and legibility has to survive that, so it comes from here.
//
// Conventions relied on by the renderer:
// - sharp corners inside one stroke are split automatically and get a round
//   joint, so a stroke may freely turn 90 degrees or more;
// - a stroke that should close on itself (O-like bowls) overshoots its start
//   by a few degrees instead of being closed, so the butt ends are hidden.

export type Pt = readonly [number, number];
export type Stroke = readonly Pt[];

/**
 * Points along an elliptical arc. Angles in degrees on the y-down grid
 * (0 = right, 90 = down, -90 = up); a1 < a0 walks the other way round.
 * 15 degree steps keep curves smooth at captcha sizes without bloating paths.
 */
function arc(cx: number, cy: number, rx: number, ry: number, a0: number, a1: number): Pt[] {
  const steps = Math.max(2, Math.ceil(Math.abs(a1 - a0) / 15));
  const pts: Pt[] = [];
  for (let i = 0; i <= steps; i++) {
    const a = ((a0 + ((a1 - a0) * i) / steps) * Math.PI) / 180;
    pts.push([cx + rx * Math.cos(a), cy + ry * Math.sin(a)]);
  }
  return pts;
}

export const GLYPHS: Readonly<Record<string, readonly Stroke[]>> = {
  A: [
    [[1, 13], [5, 1], [9, 13]],
    [[2.33, 9], [7.67, 9]],
  ],
  C: [arc(5.4, 7, 4.2, 6, -48, -312)],
  D: [
    [[1.5, 1], [1.5, 13]],
    [[1.5, 1], ...arc(4, 7, 4.6, 6, -90, 90), [1.5, 13]],
  ],
  E: [
    [[8.8, 1], [1.5, 1], [1.5, 13], [8.8, 13]],
    [[1.5, 7], [7.4, 7]],
  ],
  F: [
    [[8.8, 1], [1.5, 1], [1.5, 13]],
    [[1.5, 7], [7.4, 7]],
  ],
  // The inward bar is what tells G apart from C and from 6 (no closed loop).
  G: [[...arc(5.3, 7, 4.2, 6, -45, -330), [8.94, 7.6], [5.4, 7.6]]],
  H: [
    [[1.5, 1], [1.5, 13]],
    [[8.5, 1], [8.5, 13]],
    [[1.5, 7], [8.5, 7]],
  ],
  J: [[[3.6, 1], [8, 1], [8, 9.5], ...arc(5, 9.5, 3, 3.5, 0, 170)]],
  K: [
    [[1.5, 1], [1.5, 13]],
    [[8.8, 1], [1.5, 8.6]],
    [[4.3, 5.68], [8.8, 13]],
  ],
  L: [[[1.5, 1], [1.5, 13], [8.6, 13]]],
  M: [[[1.2, 13], [1.2, 1], [5, 9.5], [8.8, 1], [8.8, 13]]],
  N: [[[1.5, 13], [1.5, 1], [8.5, 13], [8.5, 1]]],
  P: [[[1.5, 13], [1.5, 1], [4.8, 1], ...arc(4.8, 4.3, 3.7, 3.3, -90, 90), [1.5, 7.6]]],
  Q: [
    arc(5, 7, 4, 6, -90, 290),
    [[5.4, 8.8], [9.6, 13.6]],
  ],
  R: [
    [[1.5, 13], [1.5, 1], [4.8, 1], ...arc(4.8, 4.3, 3.7, 3.3, -90, 90), [1.5, 7.6]],
    [[4.8, 7.6], [8.8, 13]],
  ],
  T: [
    [[1, 1.2], [9, 1.2]],
    [[5, 1.2], [5, 13]],
  ],
  W: [[[0.6, 1], [2.7, 13], [5, 4.5], [7.3, 13], [9.4, 1]]],
  X: [
    [[1.2, 1], [8.8, 13]],
    [[8.8, 1], [1.2, 13]],
  ],
  Y: [
    [[1.2, 1], [5, 7.2], [8.8, 1]],
    [[5, 7.2], [5, 13]],
  ],
  "3": [
    [...arc(4.8, 4, 3.6, 3, -155, 90), [3.5, 7]],
    arc(4.8, 10, 4.1, 3, -90, 150),
  ],
  // Closed 4 with a full-height stem keeps it distinct from A.
  "4": [[[6.5, 13], [6.5, 1], [1, 9.5], [9, 9.5]]],
  // Hook and bowl share their tangent at the left edge, so they form one stroke.
  "6": [[...arc(9.2, 9.5, 8, 8.5, -105, -180), ...arc(5, 9.5, 3.8, 3.5, 180, -195)]],
  "7": [[[1.2, 1.2], [8.8, 1.2], [3.8, 13]]],
};
