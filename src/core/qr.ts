import { correction, generate } from 'lean-qr';
import { toSvgDataURL } from 'lean-qr/extras/svg';

/**
 * QR codes for TOTP enrolment (the otpauth:// URI), drawn by lean-qr: no dependencies, ~8 kB,
 * plain string output (no DOM, canvas or network), so the same call runs on Bun, Deno, Node and
 * workerd. Error correction at least M (~15 % of the symbol may be unreadable: glare on a
 * screen); lean-qr raises it further when the chosen size has room.
 */
export interface QrModules {
  /** Modules per side, quiet zone excluded. */
  readonly size: number;
  /** True for a dark module; false outside the symbol. */
  get(x: number, y: number): boolean;
}

export function qrModules(text: string): QrModules {
  return generate(text, { minCorrectionLevel: correction.M });
}

/**
 * `data:image/svg+xml;base64,…`: one path of dark modules on a white rectangle (so a dark page
 * theme still shows the contrast a camera needs), with the 4-module quiet zone the standard
 * asks for, `scale` pixels per module.
 */
export function qrSvgDataUrl(text: string, scale = 4): string {
  return toSvgDataURL(qrModules(text), { on: 'black', off: 'white', pad: 4, scale });
}
