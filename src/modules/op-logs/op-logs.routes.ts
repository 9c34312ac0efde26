import type { Context } from 'hono';
import { createRoute } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { OpLogDeleteRequest, OpLogSchema, OpLogPage, OpLogPageRequest } from './op-logs.schemas.ts';
import { clearOpLogs, deleteOpLogs, opLogDetail, pageOpLogs } from './op-logs.service.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { OpLogPageParams } from './op-logs.schemas.ts';
import { OP_SCOPE, opLogFilter } from './op-logs.service.ts';

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

const exportOpLogsRoute = exportRoute('sys:opLog:export', '/app/sysOpLog', tags, 'operation log rows', exportRequestSchema('OpLogExportRequest', OpLogPageParams));

/** The operation log rows export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportOpLogs(c: Context, params: Parameters<typeof opLogFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'operation-log',
    rows: opLogFilter(params),
    scope: OP_SCOPE,
    select: (q) => q.selectAll('op_log'),
    keys: ['op_log.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Module', value: (r) => r.module },
      { header: 'Action', value: (r) => r.action },
      { header: 'Method', value: (r) => r.method },
      { header: 'Path', value: (r) => r.path },
      { header: 'Operator ID', value: (r) => r.operator_id },
      { header: 'Operator', value: (r) => r.operator_name },
      { header: 'IP', value: (r) => r.ip },
      { header: 'User agent', value: (r) => r.user_agent },
      { header: 'Params', value: (r) => r.params },
      { header: 'Status', value: (r) => r.status },
      { header: 'Error', value: (r) => r.error_msg },
      { header: 'Duration (ms)', value: (r) => r.duration_ms },
      { header: 'Trace ID', value: (r) => r.trace_id },
      { header: 'Time', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const opLogRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageOpLogs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await opLogDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(deleteRoute, async (c) => ok(c, { deleted: await deleteOpLogs(c.get('run'), c.req.valid('json').ids) }))
  .openapi(clearRoute, async (c) => ok(c, { deleted: await clearOpLogs(c.get('run')) }))
  .openapi(exportOpLogsRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportOpLogs(c, params, format)) as never;
  });
