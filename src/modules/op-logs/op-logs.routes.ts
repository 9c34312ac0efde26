import { createRoute } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { OpLogDeleteRequest, OpLogSchema, OpLogPage, OpLogPageRequest } from './op-logs.schemas.ts';
import { clearOpLogs, deleteOpLogs, opLogDetail, pageOpLogs } from './op-logs.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const tags = ['Operation log'];
const deleted = okResponse('Rows deleted', DeletedCount);

const pageRoute = guarded(
  'sys:opLog:page',
  createRoute({
    method: 'post',
    path: '/app/sysOpLog/page',
    tags,
    summary: 'Recorded write operations, newest first by default (params only in detail)',
    request: { body: jsonBody(OpLogPageRequest) },
    responses: okResponse('A page of operations', OpLogPage),
  }),
);

const detailRoute = guarded(
  'sys:opLog:detail',
  createRoute({
    method: 'get',
    path: '/app/sysOpLog/detail',
    tags,
    summary: 'One recorded operation with its (redacted) params',
    request: { query: idQuerySchema },
    responses: {
      ...okResponse('The operation', OpLogSchema),
      404: errorResponse('No such row'),
    },
  }),
);

const deleteRoute = guarded(
  'sys:opLog:delete',
  createRoute({
    method: 'post',
    path: '/app/sysOpLog/delete',
    tags,
    summary: 'Delete operation-log rows (ids that do not exist are skipped)',
    request: { body: jsonBody(OpLogDeleteRequest) },
    responses: deleted,
  }),
  { oplog: true },
);

const clearRoute = guarded(
  'sys:opLog:clear',
  createRoute({
    method: 'post',
    path: '/app/sysOpLog/clear',
    tags,
    summary: 'Delete every operation-log row; the clear itself is then recorded as the one remaining row',
    responses: deleted,
  }),
  { oplog: true },
);

export const opLogRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageOpLogs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await opLogDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(deleteRoute, async (c) => ok(c, { deleted: await deleteOpLogs(c.get('run'), c.req.valid('json').ids) }))
  .openapi(clearRoute, async (c) => ok(c, { deleted: await clearOpLogs(c.get('run')) }));
