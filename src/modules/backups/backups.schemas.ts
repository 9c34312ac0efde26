import { z } from '@hono/zod-openapi';
import { idsSchema, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';

export const BackupSchema = z
  .object({
    id: z.number().int(),
    name: z.string().openapi({ description: 'Archive file name (a tar file)', example: 'backup-20261123T170000Z-4f2a.tar' }),
    size: z.number().int().openapi({ description: 'Archive size in bytes (0 until done)' }),
    sha256: z.string().openapi({ description: 'sha256 of the whole archive (empty until done)' }),
    status: z.enum(['running', 'done', 'failed']),
    trigger: z.enum(['manual', 'scheduled']),
    createdBy: z.number().int().nullable().openapi({ description: 'User who asked for it; null for scheduled backups' }),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
    errorMsg: z.string().nullable(),
  })
  .openapi('Backup');

export const BackupPageParams = z
  .strictObject({
    status: z.enum(['running', 'done', 'failed']).optional(),
    trigger: z.enum(['manual', 'scheduled']).optional(),
  })
  .openapi('BackupPageParams');

export const BackupPageRequest = pageRequestSchema('BackupPageRequest', BackupPageParams, ['createdAt', 'size']);
export const BackupPage = pageResponseSchema('BackupPage', BackupSchema);
export const BackupDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('BackupDeleteRequest');

export type Backup = z.infer<typeof BackupSchema>;
export type BackupPageInput = z.infer<typeof BackupPageRequest>;
