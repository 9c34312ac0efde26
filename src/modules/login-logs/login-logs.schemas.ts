import { z } from '@hono/zod-openapi';
import { dateRangeParams, idsSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';

export const LoginLogSchema = z
  .object({
    id: z.number().int(),
    loginName: z.string().openapi({ description: 'The name that was typed (may not exist)' }),
    userId: z.number().int().nullable(),
    status: z.enum(['success', 'failure']),
    msg: z.string(),
    ip: z.string(),
    userAgent: z.string(),
    browser: z.string(),
    os: z.string(),
    country: z.string().nullable(),
    city: z.string().nullable(),
    traceId: z.string(),
    createdAt: z.string(),
    factor: z.enum(['totp', 'passkey', 'recovery']).nullable().openapi({ description: 'The second factor that completed this login (null: none)' }),
  })
  .openapi('LoginLog');

export const LoginLogPageParams = z
  .strictObject({
    loginName: likeText().optional().openapi({ description: 'Start of the login name, case-insensitive (`adm` finds admin)' }),
    ip: likeText().optional().openapi({ description: 'Start of the address (`10.1.` finds 10.1.x.x)' }),
    status: z.enum(['success', 'failure'], { message: 'must be success or failure' }).optional(),
    ...dateRangeParams,
  })
  .openapi('LoginLogPageParams');

export const LoginLogPageRequest = pageRequestSchema('LoginLogPageRequest', LoginLogPageParams, ['createdAt', 'loginName', 'ip', 'status']);
export const LoginLogPage = pageResponseSchema('LoginLogPage', LoginLogSchema);
export const LoginLogDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('LoginLogDeleteRequest');

export type LoginLogPageInput = z.infer<typeof LoginLogPageRequest>;
