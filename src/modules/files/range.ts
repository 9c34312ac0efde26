// HTTP Range and conditional-request helpers for file downloads (RFC 9110).
//
// We deliberately support a single byte range only. Multipart/byteranges
// responses are rarely needed by real clients (video players and download
// managers ask for one range at a time), and overlapping multi-range requests
// are a known amplification vector. RFC 9110 §14.2 lets a server ignore Range,
// so anything we do not handle simply gets the full representation.

export type RangeResult =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const FULL: RangeResult = { kind: 'full' };
const UNSATISFIABLE: RangeResult = { kind: 'unsatisfiable' };

// Range unit names are case-insensitive (RFC 9110 §14.1). OWS is tolerated
// around the range-set since the list syntax allows it.
const BYTES_RE = /^bytes=[ \t]*(.*?)[ \t]*$/i;
const SPEC_RE = /^(?:(\d+)-(\d*)|-(\d+))$/;

/**
 * Interprets a Range header for a representation of `size` bytes.
 * `end` in a partial result is inclusive, as in Content-Range.
 */
export function parseRange(header: string | null | undefined, size: number): RangeResult {
  if (!Number.isSafeInteger(size) || size < 0) {
    throw new RangeError(`parseRange: invalid size ${size}`);
  }
  if (header == null) return FULL;
  const unit = BYTES_RE.exec(header.trim());
  if (!unit) return FULL;
  const set = unit[1] ?? '';
  if (set.includes(',')) return FULL;
  const m = SPEC_RE.exec(set);
  if (!m) return FULL;

  const [, first, last, suffix] = m;
  if (suffix !== undefined) {
    // Digits beyond 2^53 lose precision, but any such suffix exceeds every
    // size we can hold, so treating it as "whole file" is still exact.
    const n = Number(suffix);
    if (n === 0 || size === 0) return UNSATISFIABLE;
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }

  const start = Number(first);
  if (last !== undefined && last !== '') {
    const end = Number(last);
    // last-pos < first-pos is invalid syntax, not unsatisfiable (§14.1.1).
    if (end < start) return FULL;
    if (start >= size) return UNSATISFIABLE;
    return { kind: 'partial', start, end: Math.min(end, size - 1) };
  }
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'partial', start, end: size - 1 };
}

/** Content-Range value for a 206 or 416 response. */
export function contentRange(result: RangeResult, size: number): string | null {
  if (result.kind === 'partial') return `bytes ${result.start}-${result.end}/${size}`;
  if (result.kind === 'unsatisfiable') return `bytes */${size}`;
  return null;
}

// Strips the weak prefix and makes sure the value is a quoted opaque-tag, so
// callers may pass either `"abc"`, `W/"abc"` or a bare `abc`.
function opaqueTag(tag: string): string {
  const t = tag.trim().replace(/^W\//, '');
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t : `"${t}"`;
}

/**
 * If-None-Match evaluation (RFC 9110 §13.1.2), which uses weak comparison:
 * `W/"x"` matches `"x"`. Entity-tags may themselves contain commas, so the
 * list is scanned tag by tag rather than split on ",".
 */
export function etagMatches(ifNoneMatch: string | null | undefined, etag: string): boolean {
  if (ifNoneMatch == null) return false;
  const header = ifNoneMatch.trim();
  if (header === '') return false;
  if (header === '*') return true;
  const wanted = opaqueTag(etag);

  let i = 0;
  while (i < header.length) {
    const c = header[i];
    if (c === ' ' || c === '\t' || c === ',') {
      i++;
      continue;
    }
    let j = i;
    if (header.startsWith('W/', j)) j += 2;
    if (header[j] !== '"') {
      // Malformed member (e.g. unquoted): skip it rather than fail the whole list.
      const comma = header.indexOf(',', j);
      if (comma === -1) break;
      i = comma + 1;
      continue;
    }
    const close = header.indexOf('"', j + 1);
    if (close === -1) break;
    if (header.slice(j, close + 1) === wanted) return true;
    i = close + 1;
  }
  return false;
}
