import { z } from '@hono/zod-openapi';

/** The success body every route returns: `{status: 200, msg: "SUCCESS", data, traceId}`. */
export function okBody<T>(data: T, traceId: string) {
  return { status: 200 as const, msg: 'SUCCESS' as const, data, traceId };
}

export function errorBody(status: number, msg: string, traceId: string) {
  return { status, msg, data: null, traceId };
}

/** OpenAPI schema of the envelope around `data`. */
export function envelope<T extends z.ZodType>(data: T) {
  return z.object({
    status: z.literal(200),
    msg: z.literal('SUCCESS'),
    data,
    traceId: z.string().openapi({ example: '4bf92f3577b34da6a3ce929d0e0e4736' }),
  });
}

export const ErrorEnvelope = z
  .object({
    status: z.number().int(),
    msg: z.string(),
    data: z.null(),
    traceId: z.string(),
  })
  .openapi('ErrorEnvelope');
