import { createRoute } from '@hono/zod-openapi';
import { envelope, okBody } from '../../core/envelope';
import { guarded } from '../../http/guard';
import { createRouter, jsonBody } from '../../http/router';
import { DeletedCount, LoginLogDeleteRequest, LoginLogPage, LoginLogPageRequest } from './login-logs.schemas';
import { clearLoginLogs, deleteLoginLogs, loginLogPage } from './login-logs.service';

const tags = ['Login log'];
const deleted = { 200: { description: 'Rows deleted', content: { 'application/json': { schema: envelope(DeletedCount) } } } };

const pageRoute = guarded(
  'sys:loginLog:page',
  createRoute({
    method: 'post',
    path: '/app/sysLoginLog/page',
    tags,
    summary: 'Login attempts, successful and failed, newest first by default',
    request: { body: jsonBody(LoginLogPageRequest) },
    responses: { 200: { description: 'A page of login attempts', content: { 'application/json': { schema: envelope(LoginLogPage) } } } },
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
  .openapi(pageRoute, async (c) => c.json(okBody(await loginLogPage(c.var.deps, c.var.auth, c.req.valid('json')), c.var.traceId), 200))
  .openapi(deleteRoute, async (c) =>
    c.json(okBody({ deleted: await deleteLoginLogs(c.var.deps, c.var.auth, c.req.valid('json').ids) }, c.var.traceId), 200),
  )
  .openapi(clearRoute, async (c) => c.json(okBody({ deleted: await clearLoginLogs(c.var.deps, c.var.auth) }, c.var.traceId), 200));
