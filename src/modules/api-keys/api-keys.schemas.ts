import { z } from '@hono/zod-openapi';
import { parseCidr } from '../../core/cidr.ts';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { PERMISSION_FORMAT } from '../../core/permissions.ts';
import { idsRequest } from '../../core/schemas.ts';

export const API_KEY_STATUSES = ['active', 'revoked', 'expired'] as const;

export const ApiKeySchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: 'Nightly HR sync' }),
    userId: z.number().int().openapi({ description: 'The owner (who created it)' }),
    loginName: z.string().openapi({ description: "The owner's login name" }),
    codes: z.array(z.string()).openapi({ example: ['sys:user:page', 'sys:user:add'] }),
    expiresAt: z.string(),
    allowedIps: z.array(z.string()).openapi({ description: 'CIDR blocks the key may be used from (empty: any address)', example: ['203.0.113.0/24'] }),
    status: z.enum(API_KEY_STATUSES),
    lastUsedAt: z.string().nullable().openapi({ description: 'Recorded at most once per API_KEY_LAST_USED_SECONDS (default 60 s)' }),
    lastUsedIp: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('ApiKey');

export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  secret: z.string().openapi({
    description: 'The key, `ea_<id>_<random>`: shown this once, never again (only its hash is stored)',
    example: 'ea_7_3q2-7wVhZ3iS0m0sX8Yd1bq0Jc5lYVnB1o5X2kq1pQ8',
  }),
}).openapi('ApiKeyCreated');

const cidr = z
  .string({ message: 'must be a string' })
  .trim()
  .max(64, 'must be at most 64 characters')
  .superRefine((v, ctx) => {
    const parsed = parseCidr(v);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: `"${v.slice(0, 64)}" ${parsed}` });
  });

export const ApiKeyAddRequest = z
  .strictObject({
    name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters').openapi({ example: 'Nightly HR sync' }),
    codes: z
      .array(z.string().trim().regex(PERMISSION_FORMAT, 'must be permission codes such as sys:user:page'), { message: 'must be an array of permission codes' })
      .min(1, 'must contain at least one code')
      .max(200, 'must contain at most 200 codes')
      .transform((codes) => [...new Set(codes)])
      .openapi({ example: ['sys:user:page', 'sys:user:add'] }),
    expiresAt: z.iso
      .datetime({ offset: true, message: 'must be an ISO 8601 date-time' })
      .optional()
      .openapi({ description: 'Default: API_KEY_DEFAULT_DAYS (90) from now; at most API_KEY_MAX_DAYS (365) from now' }),
    allowedIps: z
      .array(cidr, { message: 'must be an array of CIDR blocks' })
      .max(50, 'must contain at most 50 blocks')
      .optional()
      .openapi({ description: 'IPv4/IPv6 CIDR blocks or single addresses; absent or empty: any address', example: ['203.0.113.0/24', '2001:db8::/32'] }),
  })
  .openapi('ApiKeyAddRequest', {
    description: "A new key for the caller. Every code must be one the caller holds now (403 otherwise); codes of own-account, key, role and grant operations can never be given to a key (400).",
  });

export const ApiKeyPageParams = z
  .strictObject({
    name: likeText().optional().openapi({ description: 'Part of the name (case-insensitive)' }),
    userId: idSchema.optional().openapi({ description: 'Keys of this owner' }),
    status: z.enum(API_KEY_STATUSES).optional(),
  })
  .openapi('ApiKeyPageParams');

export const ApiKeyPageRequest = pageRequestSchema('ApiKeyPageRequest', ApiKeyPageParams, ['createdAt', 'expiresAt', 'lastUsedAt', 'name']);
export const ApiKeyPage = pageResponseSchema('ApiKeyPage', ApiKeySchema);
export const ApiKeyRevokeRequest = idsRequest('ApiKeyRevokeRequest');

export type ApiKey = z.infer<typeof ApiKeySchema>;
export type ApiKeyAddInput = z.infer<typeof ApiKeyAddRequest>;
export type ApiKeyPageInput = z.infer<typeof ApiKeyPageRequest>;
