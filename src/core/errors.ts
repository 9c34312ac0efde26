/** Error codes the API can answer with; one table maps each to its HTTP status and default text. */
export const ERRORS = {
  BAD_REQUEST: { status: 400, msg: 'Request parameter error' },
  UNAUTHORIZED: { status: 401, msg: 'Not logged in or the session has expired' },
  FORBIDDEN: { status: 403, msg: 'Insufficient permission' },
  NOT_FOUND: { status: 404, msg: 'Not found' },
  CONFLICT: { status: 409, msg: 'Conflict' },
  PAYLOAD_TOO_LARGE: { status: 413, msg: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, msg: 'Unsupported media type' },
  RANGE_NOT_SATISFIABLE: { status: 416, msg: 'Range not satisfiable' },
  TOO_MANY_REQUESTS: { status: 429, msg: 'Too many requests, try again later' },
  INTERNAL: { status: 500, msg: 'Internal server error' },
  NOT_IMPLEMENTED: { status: 501, msg: 'Not available on this runtime' },
  UNAVAILABLE: { status: 503, msg: 'Service unavailable, try again shortly' },
  INSUFFICIENT_STORAGE: { status: 507, msg: 'Storage is full: the change was not saved' },
} as const;

export type ErrorCode = keyof typeof ERRORS;
export type ErrorStatus = (typeof ERRORS)[ErrorCode]['status'];

/** A failure the client may see: its message is safe to show, its status comes from ERRORS. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message?: string, headers?: Record<string, string>) {
    super(message ?? ERRORS[code].msg);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.headers = headers;
  }
}

/**
 * The caller's own verdict found INSIDE a write batch (the caller's check at its head, db/runner.ts:
 * the session ended or the permission was removed after the request's auth statement ran). It
 * outranks every rule of the write, so no early check may explain it away (WritePlan.explain).
 */
export class VerdictError extends AppError {}

export const badRequest = (msg: string) => new AppError('BAD_REQUEST', msg);
export const unauthorized = (msg?: string) => new AppError('UNAUTHORIZED', msg);
export const forbidden = (msg?: string) => new AppError('FORBIDDEN', msg);
export const notFound = (msg?: string) => new AppError('NOT_FOUND', msg);
export const conflict = (msg: string) => new AppError('CONFLICT', msg);
export const tooMany = (retryAfterSec: number, msg?: string) =>
  new AppError('TOO_MANY_REQUESTS', msg, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });

/** Maps a status that is not in our table (e.g. from a framework exception) to the closest code. */
export function codeForStatus(status: number): ErrorCode {
  for (const [code, def] of Object.entries(ERRORS)) if (def.status === status) return code as ErrorCode;
  return status >= 500 ? 'INTERNAL' : 'BAD_REQUEST';
}

/** 503 with Retry-After: starting, shutting down, or the database busy beyond its wait. */
export const unavailable = (retryAfterSec: number, msg?: string) =>
  new AppError('UNAVAILABLE', msg, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) });
/** 507: storage full; the write was refused whole. */
export const storageFull = (msg?: string) => new AppError('INSUFFICIENT_STORAGE', msg);
