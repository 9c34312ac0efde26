import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { contentDisposition } from '../files/index.ts';
import { BackupDeleteRequest, BackupPage, BackupPageRequest, BackupSchema } from './backups.schemas.ts';
import { backupArchive, createBackup, deleteBackups, pageBackups } from './backups.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const tags = ['Backups'];
const onWorkers = { 501: errorResponse('On Workers: backups are D1 Time Travel’s job (the message says how)') };

const pageRoute = guarded(
  'sys:backup:page',
  createRoute({
    method: 'post',
    path: '/app/sysBackup/page',
    tags,
    summary: 'Backups, newest first by default',
    request: { body: jsonBody(BackupPageRequest) },
    responses: { ...okResponse('A page of backups', BackupPage), ...onWorkers },
  }),
);

const createBackupRoute = guarded(
  'sys:backup:create',
  createRoute({
    method: 'post',
    path: '/app/sysBackup/create',
    tags,
    summary: 'Take a backup now (answers when the archive is complete)',
    description:
      'One tar archive: a consistent snapshot of the database taken while the service runs, every file blob it references, and manifest.json (format version, creation time, applied migrations, row counts, sha256 of every member).',
    responses: {
      ...okResponse('The finished backup', BackupSchema),
      409: errorResponse('A backup is already running'),
      500: errorResponse('The backup failed (its record says why)'),
      507: errorResponse('Storage is full'),
      ...onWorkers,
    },
  }),
  { oplog: true },
);

const downloadRoute = guarded(
  'sys:backup:download',
  createRoute({
    method: 'get',
    path: '/app/sysBackup/download',
    tags,
    summary: 'Download a finished backup archive (application/x-tar; not an envelope)',
    request: { query: idQuerySchema },
    responses: {
      200: { description: 'The archive', content: { 'application/x-tar': { schema: z.string().openapi({ type: 'string', format: 'binary' }) } } },
      404: errorResponse('No such finished backup'),
      ...onWorkers,
    },
  }),
);

const deleteRoute = guarded(
  'sys:backup:delete',
  createRoute({
    method: 'post',
    path: '/app/sysBackup/delete',
    tags,
    summary: 'Delete backups and their archives (a running one and unknown ids are skipped)',
    request: { body: jsonBody(BackupDeleteRequest) },
    responses: { ...okResponse('Backups deleted', DeletedCount), ...onWorkers },
  }),
  { oplog: true },
);

export const backupRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageBackups(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(createBackupRoute, async (c) => ok(c, await createBackup(c.get('deps'), c.get('run'), 'manual')))
  .openapi(downloadRoute, async (c) => {
    const file = await backupArchive(c.get('deps'), c.get('run'), c.req.valid('query').id);
    return new Response(file.body, {
      status: 200,
      headers: {
        'Content-Type': 'application/x-tar',
        'Content-Length': String(file.size),
        'Content-Disposition': contentDisposition('attachment', file.name),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    }) as never;
  })
  .openapi(deleteRoute, async (c) => ok(c, { deleted: await deleteBackups(c.get('deps'), c.get('run'), c.req.valid('json').ids) }));
