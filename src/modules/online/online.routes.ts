import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { ForceLogoutRequest, OnlinePage, OnlinePageRequest } from './online.schemas.ts';
import { forceLogout, pageOnline } from './online.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

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

export const onlineRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageOnline(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(forceLogoutRoute, async (c) => {
    const revoked = await forceLogout(c.get('deps'), c.get('run'), c.req.valid('json').sessionIds);
    return ok(c, { revoked });
  });
