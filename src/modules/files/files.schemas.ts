import { z } from '@hono/zod-openapi';
import { dateRangeParams, idQuerySchema, idsSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';

/** The record's signed link; `example` shows the kind's own action. */
const signedUrl = (example: string) =>
  z.string().nullable().openapi({
    description:
      'Signed, expiring link (no Authorization header needed); null unless the caller holds sys:file:download (files) / sys:image:preview (images)',
    example,
  });

export const FileSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ description: 'Sanitized original file name' }),
    extension: z.string().openapi({ description: 'Lower-case extension of the original name, without the dot; "" if none' }),
    contentType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    url: signedUrl('/app/sysFile/download?id=42&exp=1790000000&sig=…'),
    createdBy: z.number().int().nullable(),
    createdAt: z.string(),
  })
  .openapi('SysFile');

export const ImageSchema = FileSchema.extend({
  url: signedUrl('/app/sysImage/preview?id=42&exp=1790000000&sig=…'),
  width: z.number().int(),
  height: z.number().int(),
}).openapi('SysImage');

export type FileRecord = z.infer<typeof FileSchema>;
export type ImageRecord = z.infer<typeof ImageSchema>;
/** The record type of each kind, so typed clients see a file as a file and an image as an image. */
export type RecordOf<K extends 'file' | 'image'> = K extends 'image' ? ImageRecord : FileRecord;

const FilePageParams = z
  .strictObject({
    name: likeText().optional(),
    extension: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^\.?[a-z0-9]{1,16}$/, 'must be 1-16 letters or digits')
      .transform((e) => e.replace(/^\./, ''))
      .optional(),
    contentType: likeText().optional(),
    ...dateRangeParams,
  })
  .openapi('FilePageParams');

export const FILE_SORT = ['createdAt', 'name', 'size'] as const;
export const FILE_SORT_COLUMNS = { createdAt: 'created_at', name: 'name', size: 'size' } as const;

export const FilePageRequest = pageRequestSchema('FilePageRequest', FilePageParams, FILE_SORT);
export const ImagePageRequest = pageRequestSchema('ImagePageRequest', FilePageParams, FILE_SORT);
export const FilePage = pageResponseSchema('SysFilePage', FileSchema);
export const ImagePage = pageResponseSchema('SysImagePage', ImageSchema);
export type FilePageInput = z.infer<typeof FilePageRequest>;

export const FileIdsRequest = z.strictObject({ ids: idsSchema }).openapi('FileIdsRequest');

/** `?id=` plus the optional signed-link parameters. */
export const DownloadQuery = idQuerySchema.extend({
  exp: z.string().max(20).optional().openapi({ param: { name: 'exp', in: 'query' }, description: 'Signed link: expiry (Unix seconds)' }),
  s: z.string().max(64).optional().openapi({ param: { name: 's', in: 'query' }, description: 'Signed link: the session that got it (the link stops working when it ends)' }),
  sig: z.string().max(64).optional().openapi({ param: { name: 'sig', in: 'query' }, description: 'Signed link: HMAC signature' }),
});

/** The multipart form as typed clients see it: `{ file: File | Blob }` (hc: `$post({ form: { file } })`). */
type UploadForm = z.ZodObject<{ file: z.ZodType<File | Blob, File | Blob> }>;

/**
 * The multipart body, for the OpenAPI document. A plain schema object (not zod) on purpose:
 * zod-openapi would otherwise install a form validator that buffers the whole body. Its static type
 * names the zod form above, so hc<AppType> types the upload body; nothing at run time reads it.
 */
export const uploadBody = (maxBytesText: string) =>
  ({
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object' as const,
          required: ['file'],
          properties: { file: { type: 'string' as const, format: 'binary', description: `The file (at most ${maxBytesText} by default)` } },
        },
      },
    },
  }) as unknown as { required: true; content: { 'multipart/form-data': { schema: UploadForm } } };
