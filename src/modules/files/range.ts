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

// If-None-Match evaluation lives in core/etag.ts (the dictionaries answer with ETags too).
export { etagMatches } from '../../core/etag.ts';
