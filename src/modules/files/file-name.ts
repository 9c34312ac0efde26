// Upload file names are attacker-controlled text that ends up in the database,
// in admin UI listings, in logs and in Content-Disposition headers. We never
// use them as storage paths, but the name is handed back to browsers and to
// whatever OS the admin saves the download on, so it must be inert there too.

// Stripped rather than replaced so that "invoice\u202Egpj.exe" cannot keep its
// visual disguise as "invoiceexe.jpg" in any form.
//  - C0, DEL, C1: break headers, logs and terminals.
//  - U+00AD, U+200B, U+2060-U+2064, U+FEFF, U+180E, U+FFF9-U+FFFB: invisible,
//    let two different names render identically.
//  - U+200C: zero-width non-joiner, same spoofing concern.
//  - U+200E/U+200F/U+061C, U+202A-U+202E, U+2066-U+2069: bidi controls that
//    reorder how the extension is displayed.
//  - U+2028/U+2029: line breaks that survive most "strip \r\n" filters.
const STRIP_RE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]/g;

// U+200D (ZWJ) is also zero-width, but it is what glues emoji sequences like
// "👨‍👩‍👧" together; we keep it only between pictographs and drop it elsewhere.
const STRAY_ZWJ_RE =
  /(?<![\p{Extended_Pictographic}\u{fe0f}\u{1f3fb}-\u{1f3ff}])\u200d|\u200d(?!\p{Extended_Pictographic})/gu;

// Lone surrogates cannot be encoded as UTF-8 and would silently turn into
// U+FFFD somewhere downstream, so two different names could collide later.
const LONE_SURROGATE_RE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// Windows resolves these to devices regardless of extension ("con.txt") and
// ignores trailing spaces before the dot ("CON .txt"). Superscript digits are
// accepted by Windows as COM/LPT port numbers as well.
const RESERVED_RE = /^(con|prn|aux|nul|conin\$|conout\$|(com|lpt)[1-9\u00b9\u00b2\u00b3])$/i;

const SAFE_EXT_RE = /^\.[A-Za-z0-9]{1,16}$/;
const FALLBACK = 'file';

function trimEnds(s: string): string {
  return s.replace(/^[\s.]+|[\s.]+$/gu, '');
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

let segmenter: Intl.Segmenter | null | undefined;
function getSegmenter(): Intl.Segmenter | null {
  if (segmenter === undefined) {
    segmenter = typeof Intl !== 'undefined' && 'Segmenter' in Intl ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  }
  return segmenter;
}

// The budget is in code points (so a combining-mark "zalgo" cluster cannot
// exceed it), but we only cut on grapheme boundaries when the runtime can tell
// us where they are, so we never leave half an emoji or a dangling accent.
function cutToCodePoints(s: string, budget: number): string {
  let out = '';
  let used = 0;
  const seg = getSegmenter();
  if (seg) {
    for (const { segment } of seg.segment(s)) {
      const n = codePointLength(segment);
      if (used + n > budget) break;
      out += segment;
      used += n;
    }
    return out;
  }
  for (const ch of s) {
    if (used + 1 > budget) break;
    out += ch;
    used++;
  }
  return out;
}

function fitLength(s: string, max: number): string {
  if (codePointLength(s) <= max) return s;
  const dot = s.lastIndexOf('.');
  const ext = dot > 0 ? s.slice(dot) : '';
  // Keep the extension so the download still opens with the right program;
  // only bother when at least one base character fits next to it.
  if (ext && SAFE_EXT_RE.test(ext) && ext.length < max) {
    const base = trimEnds(cutToCodePoints(s.slice(0, dot), max - ext.length));
    if (base) return base + ext;
  }
  return trimEnds(cutToCodePoints(s, max));
}

function isReserved(s: string): boolean {
  const dot = s.indexOf('.');
  const base = (dot === -1 ? s : s.slice(0, dot)).replace(/\s+$/u, '');
  return RESERVED_RE.test(base);
}

/**
 * Turns an untrusted client file name into a display/download-safe one.
 * maxLength counts Unicode code points, not UTF-16 units or bytes.
 */
export function sanitizeFileName(raw: string, maxLength = 200): string {
  const max = Number.isFinite(maxLength) ? Math.max(1, Math.floor(maxLength)) : 200;
  let s = String(raw ?? '')
    .replace(LONE_SURROGATE_RE, '')
    .replace(STRIP_RE, '')
    .replace(STRAY_ZWJ_RE, '');
  // Browsers on Windows used to send full paths ("C:\\Users\\...\\a.txt"), and
  // a hostile client may send "../../x"; only the final segment is a name.
  const parts = s.split(/[\\/]/);
  s = parts[parts.length - 1] ?? '';
  // Normalize after stripping: removing an invisible char can leave a base
  // letter next to a combining mark that only now composes.
  s = s.normalize('NFC');
  s = s.replace(/\.{2,}/g, '.');
  s = trimEnds(s);
  if (s === '' || s === '.' || s === '..') return cutToCodePoints(FALLBACK, max);
  s = fitLength(s, max);
  if (isReserved(s)) {
    // Re-fit: the underscore may push us one over the cap, and cutting from
    // the end of "_CON" keeps the prefix, so the result stays non-reserved.
    s = fitLength('_' + s, max);
  }
  return s || cutToCodePoints(FALLBACK, max);
}

/** Lowercase extension without the dot, or "" if absent or unusual. */
export function fileExtension(name: string): string {
  const seg = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = seg.lastIndexOf('.');
  // A leading dot marks a hidden file (".env"), not an extension.
  if (dot <= 0) return '';
  const ext = seg.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,16}$/.test(ext) ? ext : '';
}

// RFC 5987 attr-char: ALPHA / DIGIT / "!" / "#" / "$" / "&" / "+" / "-" / "."
// / "^" / "_" / "`" / "|" / "~". encodeURIComponent leaves ' ( ) * unencoded,
// which is not valid in ext-value, hence our own encoder.
function isAttrChar(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    '!#$&+-.^_`|~'.includes(String.fromCharCode(byte))
  );
}

const encoder = new TextEncoder();

function encodeRfc5987(value: string): string {
  let out = '';
  for (const byte of encoder.encode(value)) {
    out += isAttrChar(byte) ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

// The quoted fallback is for old user agents that ignore filename*. Besides
// quote and backslash (which would end or escape the quoted-string) we also
// replace "%", since some agents percent-decode the plain filename parameter
// (RFC 6266 appendix D).
function asciiFallback(value: string): string {
  let out = '';
  for (const ch of value) {
    const c = ch.codePointAt(0) ?? 0;
    out += c < 0x20 || c > 0x7e || ch === '"' || ch === '\\' || ch === '%' ? '_' : ch;
  }
  return out;
}

/** RFC 6266 Content-Disposition value with an ASCII fallback and a UTF-8 filename*. */
export function contentDisposition(kind: 'attachment' | 'inline', fileName: string): string {
  // Stray lone surrogates would make TextEncoder emit U+FFFD; strip them so
  // both parameters describe the same name.
  const name = fileName.replace(LONE_SURROGATE_RE, '') || FALLBACK;
  return `${kind}; filename="${asciiFallback(name)}"; filename*=UTF-8''${encodeRfc5987(name)}`;
}
