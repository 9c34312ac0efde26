import { z } from '@hono/zod-openapi';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { StatusSchema, idsRequest } from '../../core/schemas.ts';

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
const required = (max: number) => text(max).min(1, 'must not be empty');
const versionField = z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1');

export const DICT_CODE_FORMAT = /^[a-z0-9_]{1,64}$/;
export const TAG_TYPES = ['default', 'primary', 'success', 'info', 'warning', 'danger'] as const;

const codeField = z
  .string()
  .trim()
  .regex(DICT_CODE_FORMAT, 'must be 1-64 characters: lower-case letters, digits or _')
  .openapi({ example: 'sys_normal_disable' });
const TagTypeSchema = z.enum(TAG_TYPES, { message: `must be one of ${TAG_TYPES.join(', ')}` });
/** Class names only: what a front end puts in a `class` attribute. */
const cssClassField = text(100)
  .regex(/^[A-Za-z0-9_ -]*$/, 'may contain letters, digits, spaces, _ and - only')
  .nullable()
  .openapi({ example: 'text-success' });
const remarkField = text(255).nullable();

// ---- types ----

export const DictTypeSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ example: '系统开关' }),
    code: z.string().openapi({ example: 'sys_normal_disable' }),
    status: StatusSchema,
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('DictType');

const typeFields = { name: required(64).openapi({ example: '系统开关' }), code: codeField, status: StatusSchema, remark: remarkField };

export const DictTypeAddRequest = z
  .strictObject({ name: typeFields.name, code: typeFields.code, status: typeFields.status.optional(), remark: typeFields.remark.optional() })
  .openapi('DictTypeAddRequest', { description: 'A new dictionary type; code is unique (lower-case letters, digits, _), status defaults to enabled.' });

export const DictTypeEditRequest = z
  .strictObject({
    id: idSchema,
    version: versionField,
    name: typeFields.name.optional(),
    code: typeFields.code.optional(),
    status: typeFields.status.optional(),
    remark: typeFields.remark.optional(),
  })
  .openapi('DictTypeEditRequest', { description: 'Partial update; `version` must be the one read (stale → 409). A new code carries the items along.' });

export const DictTypePageParams = z
  .strictObject({ name: likeText().optional(), code: likeText().optional(), status: StatusSchema.optional() })
  .openapi('DictTypePageParams');
export const DICT_TYPE_SORT_FIELDS = ['id', 'name', 'code', 'createdAt', 'updatedAt'] as const;
export const DictTypePageRequest = pageRequestSchema('DictTypePageRequest', DictTypePageParams, DICT_TYPE_SORT_FIELDS);
export const DictTypePage = pageResponseSchema('DictTypePage', DictTypeSchema);
export const DictTypeIdsRequest = idsRequest('DictTypeIdsRequest');

// ---- items ----

export const DictDataSchema = z
  .object({
    id: z.number().int(),
    typeCode: z.string().openapi({ example: 'sys_normal_disable' }),
    label: z.string().openapi({ example: '正常' }),
    value: z.string().openapi({ example: 'enabled' }),
    sort: z.number().int(),
    status: StatusSchema,
    tagType: TagTypeSchema,
    cssClass: z.string().nullable(),
    isDefault: z.boolean(),
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('DictData');

const dataFields = {
  typeCode: codeField,
  label: required(100).openapi({ example: '正常' }),
  value: required(100).openapi({ example: 'enabled' }),
  sort: z.number({ message: 'must be a number' }).int('must be an integer').min(-1_000_000).max(1_000_000),
  status: StatusSchema,
  tagType: TagTypeSchema,
  cssClass: cssClassField,
  isDefault: z.boolean({ message: 'must be true or false' }),
  remark: remarkField,
};

export const DictDataAddRequest = z
  .strictObject({
    typeCode: dataFields.typeCode,
    label: dataFields.label,
    value: dataFields.value,
    sort: dataFields.sort.optional(),
    status: dataFields.status.optional(),
    tagType: dataFields.tagType.optional(),
    cssClass: dataFields.cssClass.optional(),
    isDefault: dataFields.isDefault.optional(),
    remark: dataFields.remark.optional(),
  })
  .openapi('DictDataAddRequest', {
    description: 'A new item of an existing type (400 otherwise); value is unique within its type (409). sort defaults to 0, tagType to default.',
  });

export const DictDataEditRequest = z
  .strictObject({
    id: idSchema,
    version: versionField,
    typeCode: dataFields.typeCode.optional(),
    label: dataFields.label.optional(),
    value: dataFields.value.optional(),
    sort: dataFields.sort.optional(),
    status: dataFields.status.optional(),
    tagType: dataFields.tagType.optional(),
    cssClass: dataFields.cssClass.optional(),
    isDefault: dataFields.isDefault.optional(),
    remark: dataFields.remark.optional(),
  })
  .openapi('DictDataEditRequest', { description: 'Partial update; `version` must be the one read (stale → 409).' });

export const DictDataPageParams = z
  .strictObject({
    typeCode: codeField.optional().openapi({ description: 'The items of this type (exact code)' }),
    label: likeText().optional(),
    status: StatusSchema.optional(),
  })
  .openapi('DictDataPageParams');
export const DICT_DATA_SORT_FIELDS = ['id', 'sort', 'label', 'value', 'createdAt', 'updatedAt'] as const;
export const DictDataPageRequest = pageRequestSchema('DictDataPageRequest', DictDataPageParams, DICT_DATA_SORT_FIELDS);
export const DictDataPage = pageResponseSchema('DictDataPage', DictDataSchema);
export const DictDataIdsRequest = idsRequest('DictDataIdsRequest');

// ---- reads for every logged-in user ----

export const DictItemSchema = DictDataSchema.pick({ id: true, typeCode: true, label: true, value: true, sort: true, tagType: true, cssClass: true, isDefault: true, remark: true }).openapi('DictItem', {
  description: 'An enabled item of an enabled dictionary type, as front ends use it.',
});

export const DictItemsQuery = z.strictObject({ code: codeField.openapi({ param: { name: 'code', in: 'query' } }) });

export const DictAllSchema = z
  .record(z.string(), z.array(DictItemSchema))
  .openapi('DictAll', { description: 'Every enabled type, by code, with its enabled items ordered by sort.' });

export type DictType = z.infer<typeof DictTypeSchema>;
export type DictData = z.infer<typeof DictDataSchema>;
export type DictItem = z.infer<typeof DictItemSchema>;
export type DictTypeAddInput = z.infer<typeof DictTypeAddRequest>;
export type DictTypeEditInput = z.infer<typeof DictTypeEditRequest>;
export type DictTypePageInput = z.infer<typeof DictTypePageRequest>;
export type DictTypeParams = z.infer<typeof DictTypePageParams>;
export type DictDataAddInput = z.infer<typeof DictDataAddRequest>;
export type DictDataEditInput = z.infer<typeof DictDataEditRequest>;
export type DictDataPageInput = z.infer<typeof DictDataPageRequest>;
export type DictDataParams = z.infer<typeof DictDataPageParams>;
