import { z } from '@hono/zod-openapi';
import { dateRangeParams, idsSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';

const opLogFields = {
  id: z.number().int(),
  module: z.string().openapi({ description: 'Controller from the path, e.g. sysUser' }),
  action: z.string().openapi({ description: 'Action from the path, e.g. add' }),
  method: z.string(),
  path: z.string(),
  operatorId: z.number().int().nullable(),
  operatorName: z.string().nullable(),
  ip: z.string(),
  userAgent: z.string(),
  status: z.number().int().openapi({ description: 'HTTP status of the response' }),
  errorMsg: z.string().nullable(),
  durationMs: z.number().int(),
  traceId: z.string(),
  createdAt: z.string(),
  params: z.string().openapi({ description: 'Request JSON, secrets redacted, at most 2 KiB' }),
  apiKeyId: z.number().int().nullable().openapi({ description: 'The API key the operation was made through (null: a login token)' }),
  apiKeyName: z.string().nullable().openapi({ description: "That key's name when the operation was made" }),
};

/** One operation-log row with every field of the contract (page records and detail alike). */
export const OpLogSchema = z.object(opLogFields).openapi('OpLog');

const identifier = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, 'must be a name such as sysUser (letters and digits)');

export const OpLogPageParams = z
  .strictObject({
    module: identifier.optional().openapi({ description: 'Exact controller name, e.g. sysUser' }),
    action: identifier.optional().openapi({ description: 'Exact action name, e.g. delete' }),
    operatorName: likeText().optional().openapi({ description: 'Start of the operator login name, case-insensitive' }),
    status: z
      .number({ message: 'must be an HTTP status number' })
      .int('must be an integer')
      .min(100, 'must be an HTTP status (100-599)')
      .max(599, 'must be an HTTP status (100-599)')
      .optional(),
    ...dateRangeParams,
  })
  .openapi('OpLogPageParams');

export const OpLogPageRequest = pageRequestSchema('OpLogPageRequest', OpLogPageParams, [
  'createdAt',
  'module',
  'operatorName',
  'status',
  'durationMs',
]);
export const OpLogPage = pageResponseSchema('OpLogPage', OpLogSchema);
export const OpLogDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('OpLogDeleteRequest');

export type OpLogPageInput = z.infer<typeof OpLogPageRequest>;
export type OpLog = z.infer<typeof OpLogSchema>;
