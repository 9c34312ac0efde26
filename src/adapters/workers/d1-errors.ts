import type { ClassifyError } from '../../core/ports.ts';

/*
 * D1 and R2 failures that mean "full" or "busy", for the one error mapper (src/http/errors.ts):
 * full → 507, busy → 503 + Retry-After. The D1 binding throws a plain Error whose message is the
 * only signal (no code, no status; the REST API's numeric codes never reach a Worker), e.g.
 *   "D1_ERROR: Exceeded maximum DB size"                 (the database reached its plan's size limit)
 *   "D1_ERROR: database or disk is full: SQLITE_FULL"    (SQLite's own SQLITE_FULL inside D1)
 *   "D1_ERROR: D1 DB is overloaded. Too many requests queued."  (Cloudflare: retry later)
 * with the same text, without the prefix, as its `cause`. R2 has no storage quota that fills (it
 * bills by use); an object too large is refused before it is sent (MAX_UPLOAD_BYTES → 413).
 * Anything else falls through to a 500: a database that was briefly unreachable must not read as
 * "buy more storage".
 */
const FULL = [/Exceeded maximum DB size/i, /SQLITE_FULL\b/, /database or disk is full/i];
const BUSY = [/D1 DB is overloaded/i];

export const classifyWorkersError: ClassifyError = (err) => {
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, depth = 0; e && typeof e === 'object' && depth < 4; e = e.cause as typeof e, depth++) {
    const message = typeof e.message === 'string' ? e.message : '';
    if (FULL.some((re) => re.test(message))) return 'full';
    if (BUSY.some((re) => re.test(message))) return 'busy';
  }
  return undefined;
};
