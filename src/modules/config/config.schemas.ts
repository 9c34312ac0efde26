import { z } from '@hono/zod-openapi';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { idsRequest } from '../../core/schemas.ts';

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);

export const CONFIG_KEY_FORMAT = /^[A-Za-z][A-Za-z0-9_.:-]{0,99}$/;
export const CONFIG_VALUE_MAX = 500;
const ConfigTypeSchema = z.enum(['builtIn', 'custom'], { message: "must be 'builtIn' or 'custom'" });

const keyField = z
  .string()
  .trim()
  .regex(CONFIG_KEY_FORMAT, 'must be 1-100 characters: a letter, then letters, digits or _ . : -')
  .openapi({ example: 'sys.account.captchaEnabled' });

export const ConfigSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: '账号自助-验证码开关' }),
    key: z.string().openapi({ example: 'sys.account.captchaEnabled' }),
    value: z.string().openapi({ example: 'true' }),
    type: ConfigTypeSchema.openapi({ description: '`builtIn`: read by the service itself, cannot be deleted (set by the system, not through the API)' }),
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Config');

const fields = {
  name: text(100).min(1, 'must not be empty').openapi({ example: 'Default theme' }),
  key: keyField,
  value: text(CONFIG_VALUE_MAX).openapi({ example: 'true' }),
  remark: text(255).nullable(),
};

export const ConfigAddRequest = z
  .strictObject({ name: fields.name, key: fields.key.openapi({ example: 'app.theme' }), value: fields.value.optional(), remark: fields.remark.optional() })
  .openapi('ConfigAddRequest', { description: 'A new custom parameter; key unique case-insensitively (409); value defaults to "".' });

export const ConfigEditRequest = z
  .strictObject({
    id: idSchema,
    version: z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1'),
    name: fields.name.optional(),
    key: fields.key.optional(),
    value: fields.value.optional(),
    remark: fields.remark.optional(),
  })
  .openapi('ConfigEditRequest', {
    description:
      'Partial update; `version` must be the one read (stale → 409). A built-in parameter keeps its key (400) and takes only the values its behaviour understands (400).',
  });

export const ConfigPageParams = z
  .strictObject({ name: likeText().optional(), key: likeText().optional(), type: ConfigTypeSchema.optional() })
  .openapi('ConfigPageParams');
export const CONFIG_SORT_FIELDS = ['id', 'name', 'key', 'createdAt', 'updatedAt'] as const;
export const ConfigPageRequest = pageRequestSchema('ConfigPageRequest', ConfigPageParams, CONFIG_SORT_FIELDS);
export const ConfigPage = pageResponseSchema('ConfigPage', ConfigSchema);
export const ConfigIdsRequest = idsRequest('ConfigIdsRequest');

export const ConfigValueQuery = z.strictObject({ key: keyField.openapi({ param: { name: 'key', in: 'query' } }) });

export type ConfigRecord = z.infer<typeof ConfigSchema>;
export type ConfigAddInput = z.infer<typeof ConfigAddRequest>;
export type ConfigEditInput = z.infer<typeof ConfigEditRequest>;
export type ConfigPageInput = z.infer<typeof ConfigPageRequest>;
export type ConfigParams = z.infer<typeof ConfigPageParams>;
