import { OpenAPIHono, z } from '@hono/zod-openapi';
import { AppError } from '../core/errors.ts';
import { ErrorEnvelope } from '../core/envelope.ts';
import { describeZodError } from './errors.ts';

/** Every validation failure, of any route, becomes our 400 envelope through this hook. */
const defaultHook = (result: { success: boolean; error?: unknown }) => {
  if (!result.success) throw new AppError('BAD_REQUEST', describeZodError(result.error as z.ZodError));
};

/** A route group; groups are mounted by createApp only. */
export function createRouter() {
  return new OpenAPIHono({ defaultHook });
}

/** A required JSON body: a missing or non-JSON body is refused instead of silently becoming {}. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } } as const;
}

/** An error answer for the OpenAPI document. */
export const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: ErrorEnvelope } } });

/** The error answers shared by routes, for the OpenAPI document. */
export const commonErrors = {
  400: errorResponse('Parameter validation failed or a business rule refused the request'),
  401: errorResponse('No token, or an invalid, expired or revoked one'),
  403: errorResponse('The caller lacks the permission code of this operation'),
  500: errorResponse('Unexpected error; logged with the traceId'),
} as const;
