import { z } from '@hono/zod-openapi';
import { likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';

export const OnlineSessionSchema = z
  .object({
    sessionId: z.string(),
    userId: z.number().int(),
    loginName: z.string(),
    ip: z.string(),
    userAgent: z.string(),
    browser: z.string(),
    os: z.string(),
    loginAt: z.string(),
    expiresAt: z.string(),
  })
  .openapi('OnlineSession');

export const OnlinePageParams = z
  .strictObject({
    loginName: likeText().optional().openapi({ description: 'Part of the login name (case-insensitive)' }),
    ip: likeText().optional().openapi({ description: 'Part of the address' }),
  })
  .openapi('OnlinePageParams');

export const OnlinePageRequest = pageRequestSchema('OnlinePageRequest', OnlinePageParams, ['loginAt', 'expiresAt', 'loginName', 'ip']);
export const OnlinePage = pageResponseSchema('OnlineSessionPage', OnlineSessionSchema);

export const ForceLogoutRequest = z
  .strictObject({
    sessionIds: z
      .array(z.uuid('must be a UUID'), { message: 'must be an array of session ids' })
      .min(1, 'must contain at least one session id')
      .max(100, 'must contain at most 100 session ids')
      .transform((ids) => [...new Set(ids.map((id) => id.toLowerCase()))]),
  })
  .openapi('ForceLogoutRequest');

export type OnlinePageInput = z.infer<typeof OnlinePageRequest>;
