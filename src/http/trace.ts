const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The trace-id of a valid W3C traceparent header, or null (all-zero ids and version ff are invalid). */
export function traceIdFromParent(header: string | undefined): string | null {
  const m = header?.trim().toLowerCase().match(TRACEPARENT);
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return null;
  return m[2]!;
}

/** 32 random hex digits: a UUIDv4 without dashes (native and fast; 122 random bits). */
export function newTraceId(): string {
  return crypto.randomUUID().replaceAll('-', '');
}
