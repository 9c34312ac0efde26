import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { AppError, ERRORS, codeForStatus } from '../core/errors.ts';
import { errorBody } from '../core/envelope.ts';
import { errorFields } from '../core/log.ts';
import type { ClassifyError, Logger } from '../core/ports.ts';
import { newTraceId } from './trace.ts';

/** "field: rule" for the first zod issue, so the client learns which field broke which rule. */
export function describeZodError(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return ERRORS.BAD_REQUEST.msg;
  const path = issue.path.map(String).join('.');
  const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
  const message = issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message;
  const where = path || (issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : 'body');
  return `${where}: ${message}${path && keys ? keys : ''}`.slice(0, 300);
}

function respond(c: Context, status: number, msg: string, headers?: Record<string, string>) {
  const traceId = c.get('traceId') ?? newTraceId();
  c.set('errorMsg', msg);
  return c.json(errorBody(status, msg, traceId), status as ContentfulStatusCode, headers);
}

/** Seconds a client should wait after the database was busy beyond its wait. */
const BUSY_RETRY_AFTER = 2;

/**
 * The single place where any failure becomes an envelope. Unknown errors never reach the client.
 * `classify` (from the runtime's adapters) recognises a busy database (503 + Retry-After) and full
 * storage (507) among the raw errors, so the core never looks at driver error codes.
 */
export function errorHandler(log: Logger, classify?: ClassifyError): ErrorHandler {
  return (err, c) => {
    if (err instanceof AppError) return respond(c, err.status, err.message, err.headers);
    const storage = classify?.(err);
    if (storage) {
      log.log('warn', storage === 'busy' ? 'database busy beyond its wait' : 'storage full', {
        traceId: c.get('traceId'),
        method: c.req.method,
        path: c.req.path,
        ...errorFields(err),
      });
      return storage === 'busy'
        ? respond(c, 503, 'The database is busy, try again shortly', { 'Retry-After': String(BUSY_RETRY_AFTER) })
        : respond(c, 507, ERRORS.INSUFFICIENT_STORAGE.msg);
    }
    if (err instanceof HTTPException) {
      const code = codeForStatus(err.status);
      // Hono's own 400s ("Malformed JSON in request body") are written for clients; others get our text.
      const msg = err.status === 400 && err.message ? err.message : ERRORS[code].msg;
      return respond(c, ERRORS[code].status, msg);
    }
    log.log('error', 'unhandled error', {
      traceId: c.get('traceId'),
      method: c.req.method,
      path: c.req.path,
      ...errorFields(err),
    });
    return respond(c, 500, ERRORS.INTERNAL.msg);
  };
}

export const notFoundHandler: NotFoundHandler = (c) => respond(c, 404, `No route for ${c.req.method} ${c.req.path.slice(0, 200)}`);
