import { z } from '@hono/zod-openapi';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { StatusSchema, idsRequest } from '../../core/schemas.ts';

export const POST_CODE_FORMAT = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const PostSchema = z
  .object({
    id: z.number().int(),
    code: z.string().openapi({ example: 'engineer' }),
    name: z.string().openapi({ example: 'Software engineer' }),
    sort: z.number().int(),
    status: StatusSchema,
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Post');

const fields = {
  code: z
    .string()
    .trim()
    .regex(POST_CODE_FORMAT, 'must be 1-64 characters: letters, digits, _ . - (not starting with _ . -)')
    .openapi({ example: 'engineer' }),
  name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters').openapi({ example: 'Software engineer' }),
  sort: z.number({ message: 'must be a number' }).int('must be an integer').min(-1_000_000).max(1_000_000),
  status: StatusSchema,
  remark: z.string().trim().max(255, 'must be at most 255 characters').nullable(),
};

export const PostAddRequest = z
  .strictObject({ code: fields.code, name: fields.name, sort: fields.sort.optional(), status: fields.status.optional(), remark: fields.remark.optional() })
  .openapi('PostAddRequest', { description: 'A new post; code unique case-insensitively (409), sort defaults to 0, status to enabled.' });

export const PostEditRequest = z
  .strictObject({
    id: idSchema,
    version: z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1'),
    code: fields.code.optional(),
    name: fields.name.optional(),
    sort: fields.sort.optional(),
    status: fields.status.optional(),
    remark: fields.remark.optional(),
  })
  .openapi('PostEditRequest', { description: 'Partial update; `version` must be the one read (stale → 409).' });

export const PostPageParams = z
  .strictObject({ code: likeText().optional(), name: likeText().optional(), status: StatusSchema.optional() })
  .openapi('PostPageParams');
export const POST_SORT_FIELDS = ['id', 'code', 'name', 'sort', 'createdAt', 'updatedAt'] as const;
export const PostPageRequest = pageRequestSchema('PostPageRequest', PostPageParams, POST_SORT_FIELDS);
export const PostPage = pageResponseSchema('PostPage', PostSchema);
export const PostIdsRequest = idsRequest('PostIdsRequest');

export type Post = z.infer<typeof PostSchema>;
export type PostAddInput = z.infer<typeof PostAddRequest>;
export type PostEditInput = z.infer<typeof PostEditRequest>;
export type PostPageInput = z.infer<typeof PostPageRequest>;
export type PostParams = z.infer<typeof PostPageParams>;
