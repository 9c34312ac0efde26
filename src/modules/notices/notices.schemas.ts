import { z } from '@hono/zod-openapi';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { idsRequest } from '../../core/schemas.ts';

export const NOTICE_TYPES = ['notice', 'announcement'] as const;
export const NOTICE_STATUSES = ['draft', 'published', 'closed'] as const;
/** Longest content accepted, in characters, before sanitising (the JSON body limit is 1 MiB). */
export const CONTENT_MAX = 200_000;
export const LATEST_DEFAULT = 5;
export const LATEST_MAX = 50;

const NoticeTypeSchema = z.enum(NOTICE_TYPES, { message: "must be 'notice' or 'announcement'" });
const NoticeStatusSchema = z.enum(NOTICE_STATUSES, { message: "must be 'draft', 'published' or 'closed'" });

export const NoticeSchema = z
  .object({
    id: z.number().int(),
    title: z.string().openapi({ example: 'Maintenance on Saturday' }),
    type: NoticeTypeSchema,
    content: z.string().openapi({ description: 'HTML as sanitised on write', example: '<p>The service is down from <strong>02:00</strong> to 03:00 UTC.</p>' }),
    status: NoticeStatusSchema,
    createdBy: z.number().int().nullable().openapi({ description: 'The author (data scope of the notice pages goes by it)' }),
    createdByName: z.string().openapi({ description: "The author's login name when they wrote it", example: 'admin' }),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Notice');

const fields = {
  title: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters').openapi({ example: 'Maintenance on Saturday' }),
  type: NoticeTypeSchema,
  content: z
    .string()
    .max(CONTENT_MAX, `must be at most ${CONTENT_MAX} characters`)
    .openapi({ description: 'HTML; sanitised before it is stored (no script, event handler, javascript: URL or external resource survives)', example: '<p>The service is down from <strong>02:00</strong> to 03:00 UTC.</p>' }),
  status: NoticeStatusSchema,
};

export const NoticeAddRequest = z
  .strictObject({ title: fields.title, type: fields.type, content: fields.content.optional(), status: fields.status.optional() })
  .openapi('NoticeAddRequest', { description: 'A new notice; status defaults to draft, content to "". The caller is its author.' });

export const NoticeEditRequest = z
  .strictObject({
    id: idSchema,
    version: z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1'),
    title: fields.title.optional(),
    type: fields.type.optional(),
    content: fields.content.optional(),
    status: fields.status.optional(),
  })
  .openapi('NoticeEditRequest', { description: 'Partial update; `version` must be the one read (stale → 409).' });

export const NoticePageParams = z
  .strictObject({
    title: likeText().optional(),
    type: NoticeTypeSchema.optional(),
    status: NoticeStatusSchema.optional(),
    createdBy: idSchema.optional().openapi({ description: "The author's user id" }),
  })
  .openapi('NoticePageParams');
export const NOTICE_SORT_FIELDS = ['id', 'title', 'createdAt', 'updatedAt'] as const;
export const NoticePageRequest = pageRequestSchema('NoticePageRequest', NoticePageParams, NOTICE_SORT_FIELDS);
export const NoticePage = pageResponseSchema('NoticePage', NoticeSchema);
export const NoticeIdsRequest = idsRequest('NoticeIdsRequest');
export const NoticeMarkReadRequest = idsRequest('NoticeMarkReadRequest');

export const LatestQuery = z.strictObject({
  limit: z
    .union([z.string(), z.number()])
    .transform(String)
    .pipe(
      z
        .string()
        .regex(/^[1-9][0-9]{0,2}$/, 'must be a positive integer')
        .transform(Number)
        .refine((n) => n <= LATEST_MAX, `must be at most ${LATEST_MAX}`),
    )
    .optional()
    .openapi({ param: { name: 'limit', in: 'query' }, type: 'integer', minimum: 1, maximum: LATEST_MAX, example: LATEST_DEFAULT, description: `How many (default ${LATEST_DEFAULT}, at most ${LATEST_MAX})` }),
});

export const NoticeLatestRecord = NoticeSchema.extend({ read: z.boolean().openapi({ description: 'The caller marked it read' }) }).openapi('NoticeLatestRecord');
export const NoticeLatest = z
  .object({
    unread: z.number().int().openapi({ description: 'Published notices the caller has not marked read (all of them, not only these records)' }),
    records: z.array(NoticeLatestRecord),
  })
  .openapi('NoticeLatest');

export type Notice = z.infer<typeof NoticeSchema>;
export type NoticeAddInput = z.infer<typeof NoticeAddRequest>;
export type NoticeEditInput = z.infer<typeof NoticeEditRequest>;
export type NoticePageInput = z.infer<typeof NoticePageRequest>;
export type NoticeParams = z.infer<typeof NoticePageParams>;
