import type { Context } from 'hono';
import type { z } from '@hono/zod-openapi';
import { envelope, okBody } from '../core/envelope.ts';

/** A handler's success answer: the envelope around `data` with this request's trace id, status 200. */
export function ok<T>(c: Context, data: T) {
  return c.json(okBody(data, c.get('traceId')), 200);
}

/** A route declaration's success answer: `200` with the envelope around `schema`, for `responses`. */
export function okResponse<T extends z.ZodType>(description: string, schema: T) {
  return { 200: { description, content: { 'application/json': { schema: envelope(schema) } } } };
}
