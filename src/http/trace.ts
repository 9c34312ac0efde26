const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace-id of a valid W3C traceparent header, or null (all-zero ids and version ff are invalid). */
export function traceIdFromParent(header: string | undefined): string | null {
  const m = header?.trim().toLowerCase().match(TRACEPARENT);
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return null;
  return m[2]!;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Random bytes drawn in blocks: one getRandomValues call per 256 trace ids. */
const pool = new Uint8Array(4096);
let used = pool.length;

/** 32 random hex digits (128 random bits from the platform's CSPRNG), every request's trace id. */
export function newTraceId(): string {
  if (used === pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let id = '';
  for (let i = used; i < used + 16; i++) id += HEX[pool[i]!];
  used += 16;
  return id;
}
