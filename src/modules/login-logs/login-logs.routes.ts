import { createRoute } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { LoginLogDeleteRequest, LoginLogPage, LoginLogPageRequest } from './login-logs.schemas.ts';
import { clearLoginLogs, deleteLoginLogs, pageLoginLogs } from './login-logs.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

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

export const loginLogRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageLoginLogs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) =>
    ok(c, { deleted: await deleteLoginLogs(c.get('run'), c.req.valid('json').ids) }),
  )
  .openapi(clearRoute, async (c) => ok(c, { deleted: await clearLoginLogs(c.get('run')) }));
