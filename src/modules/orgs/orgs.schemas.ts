import { z } from '@hono/zod-openapi';
import { idSchema, idsSchema } from '../../core/pagination.ts';

const StatusSchema = z.enum(['enabled', 'disabled'], { message: "must be 'enabled' or 'disabled'" });

export const OrgSchema = z
  .object({
    id: z.number().int(),
    parentId: z.number().int().openapi({ description: '0 for a root organisation' }),
    name: z.string(),
    code: z.string(),
    sort: z.number().int(),
    status: StatusSchema,
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Org');

export type Org = z.infer<typeof OrgSchema>;
export type OrgNode = Org & { children: OrgNode[] };

export const OrgNodeSchema = OrgSchema.extend({
  get children(): z.ZodArray<typeof OrgNodeSchema> {
    return z.array(OrgNodeSchema);
  },
}).openapi('OrgNode');

export const ORG_CODE_FORMAT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const orgFields = {
  parentId: z
    .number({ message: 'must be a number' })
    .int('must be an integer')
    .min(0, 'must be 0 (root) or an organisation id')
    .max(Number.MAX_SAFE_INTEGER, 'is too large')
    .openapi({ description: '0 for a root organisation; the parent must exist' }),
  name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  code: z.string().trim().regex(ORG_CODE_FORMAT, 'must be 1-64 characters: letters, digits, _ . - (not starting with _ . -)'),
  sort: z.number({ message: 'must be a number' }).int('must be an integer').min(-1_000_000).max(1_000_000),
  status: StatusSchema,
  remark: z.string().trim().max(255, 'must be at most 255 characters').nullable(),
};

export const OrgAddRequest = z
  .strictObject({
    parentId: orgFields.parentId.optional(),
    name: orgFields.name,
    code: orgFields.code,
    sort: orgFields.sort.optional(),
    status: orgFields.status.optional(),
    remark: orgFields.remark.optional(),
  })
  .openapi('OrgAddRequest', { description: 'A new organisation; parentId defaults to 0 (root), code is unique case-insensitively.' });

export const OrgEditRequest = z
  .strictObject({
    id: idSchema,
    version: z.number().int('must be an integer').min(1, 'must be at least 1'),
    parentId: orgFields.parentId.optional(),
    name: orgFields.name.optional(),
    code: orgFields.code.optional(),
    sort: orgFields.sort.optional(),
    status: orgFields.status.optional(),
    remark: orgFields.remark.optional(),
  })
  .openapi('OrgEditRequest', {
    description: 'Partial update; `version` must be the one read (stale → 409). A move under the org itself or a descendant is 400.',
  });

export const OrgDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('OrgIdsRequest');

export type OrgAddInput = z.infer<typeof OrgAddRequest>;
export type OrgEditInput = z.infer<typeof OrgEditRequest>;
