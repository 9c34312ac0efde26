import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { ForceLogoutRequest, OnlinePage, OnlinePageRequest } from './online.schemas.ts';
import { forceLogout, pageOnline } from './online.service.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when } from '../export/index.ts';
import { OnlinePageParams } from './online.schemas.ts';
import { ONLINE_SCOPE, onlineFilter } from './online.service.ts';

const tags = ['Online users'];

const pageRoute = guarded(
  'sys:online:page',
  createRoute({
    method: 'post',
    path: '/app/sysOnlineUser/page',
    tags,
    summary: 'Live sessions (not revoked, not expired)',
    request: { body: jsonBody(OnlinePageRequest) },
    responses: okResponse('A page of sessions', OnlinePage),
  }),
);

const ForceLogoutResult = z.object({ revoked: z.number().int().openapi({ description: 'Sessions that were live and are now revoked' }) }).openapi('ForceLogoutResult');

const forceLogoutRoute = guarded(
  'sys:online:forceLogout',
  createRoute({
    method: 'post',
    path: '/app/sysOnlineUser/forceLogout',
    tags,
    summary: 'Revoke sessions; their tokens fail on the next request',
    description:
      "Unknown or already ended session ids, and sessions of users outside the caller's data scope, are skipped. A caller who is not a super admin may only end sessions of users whose permission codes and data scope they hold (403 \"outside your authority\"), and never a super admin's session (403).",
    request: { body: jsonBody(ForceLogoutRequest) },
    responses: okResponse('Revoked', ForceLogoutResult),
  }),
  { oplog: true },
);

const exportOnlineRoute = exportRoute('sys:online:export', '/app/sysOnlineUser', tags, 'online sessions', exportRequestSchema('OnlineExportRequest', OnlinePageParams));

export const onlineRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageOnline(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(forceLogoutRoute, async (c) => {
    const revoked = await forceLogout(c.get('deps'), c.get('run'), c.req.valid('json').sessionIds);
    return ok(c, { revoked });
  })
  .openapi(exportOnlineRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportAnswer(c, {
      name: 'online-users',
      rows: onlineFilter(c.get('deps'), params),
      scope: ONLINE_SCOPE,
      select: (q) => q.select(['s.id', 's.user_id', 'u.login_name', 's.ip', 's.user_agent', 's.browser', 's.os', 's.login_at', 's.expires_at']),
      keys: ['s.login_at', 's.id'],
      columns: [
        { header: 'Session ID', value: (r) => r.id },
        { header: 'User ID', value: (r) => r.user_id },
        { header: 'Login name', value: (r) => r.login_name },
        { header: 'IP', value: (r) => r.ip },
        { header: 'Browser', value: (r) => r.browser },
        { header: 'OS', value: (r) => r.os },
        { header: 'User agent', value: (r) => r.user_agent },
        { header: 'Login at', value: (r) => when(r.login_at) },
        { header: 'Expires at', value: (r) => when(r.expires_at) },
      ],
    }, format)) as never;
  });
