import type { Context } from 'hono';
import { createRoute } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { LoginLogDeleteRequest, LoginLogPage, LoginLogPageRequest } from './login-logs.schemas.ts';
import { clearLoginLogs, deleteLoginLogs, pageLoginLogs } from './login-logs.service.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { LoginLogPageParams } from './login-logs.schemas.ts';
import { LOGIN_LOG_SCOPE, loginLogFilter } from './login-logs.service.ts';

const tags = ['Login log'];
const deleted = okResponse('Rows deleted', DeletedCount);

const pageRoute = guarded(
  'sys:loginLog:page',
  createRoute({
    method: 'post',
    path: '/app/sysLoginLog/page',
    tags,
    summary: 'Login attempts, successful and failed, newest first by default',
    request: { body: jsonBody(LoginLogPageRequest) },
    responses: okResponse('A page of login attempts', LoginLogPage),
  }),
);

const deleteRoute = guarded(
  'sys:loginLog:delete',
  createRoute({
    method: 'post',
    path: '/app/sysLoginLog/delete',
    tags,
    summary: 'Delete login-log rows (ids that do not exist are skipped)',
    request: { body: jsonBody(LoginLogDeleteRequest) },
    responses: deleted,
  }),
  { oplog: true },
);

const clearRoute = guarded(
  'sys:loginLog:clear',
  createRoute({
    method: 'post',
    path: '/app/sysLoginLog/clear',
    tags,
    summary: 'Delete every login-log row (the clear itself is recorded in the operation log)',
    responses: deleted,
  }),
  { oplog: true },
);

const exportLoginLogRoute = exportRoute('sys:loginLog:export', '/app/sysLoginLog', tags, 'login log rows', exportRequestSchema('LoginLogExportRequest', LoginLogPageParams));

/** The login log rows export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportLoginLogs(c: Context, params: Parameters<typeof loginLogFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'login-log',
    rows: loginLogFilter(params),
    scope: LOGIN_LOG_SCOPE,
    select: (q) => q.selectAll('login_log'),
    keys: ['login_log.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Login name', value: (r) => r.login_name },
      { header: 'User ID', value: (r) => r.user_id },
      { header: 'Status', value: (r) => r.status, dict: 'sys_common_status' },
      { header: 'Message', value: (r) => r.msg },
      { header: 'IP', value: (r) => r.ip },
      { header: 'Country', value: (r) => r.country },
      { header: 'City', value: (r) => r.city },
      { header: 'Browser', value: (r) => r.browser },
      { header: 'OS', value: (r) => r.os },
      { header: 'User agent', value: (r) => r.user_agent },
      { header: 'Trace ID', value: (r) => r.trace_id },
      { header: 'Time', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const loginLogRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageLoginLogs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) =>
    ok(c, { deleted: await deleteLoginLogs(c.get('run'), c.req.valid('json').ids) }),
  )
  .openapi(clearRoute, async (c) => ok(c, { deleted: await clearLoginLogs(c.get('run')) }))
  .openapi(exportLoginLogRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportLoginLogs(c, params, format)) as never;
  });
