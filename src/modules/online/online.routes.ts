import { createRoute, z } from '@hono/zod-openapi';
import { envelope, okBody } from '../../core/envelope';
import { guarded } from '../../http/guard';
import { createRouter, jsonBody } from '../../http/router';
import { ForceLogoutRequest, OnlinePage, OnlinePageRequest } from './online.schemas';
import { forceLogout, onlinePage } from './online.service';

const tags = ['Online users'];

const pageRoute = guarded(
  'sys:online:page',
  createRoute({
    method: 'post',
    path: '/app/sysOnlineUser/page',
    tags,
    summary: 'Live sessions (not revoked, not expired)',
    request: { body: jsonBody(OnlinePageRequest) },
    responses: { 200: { description: 'A page of sessions', content: { 'application/json': { schema: envelope(OnlinePage) } } } },
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
    responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: envelope(ForceLogoutResult) } } } },
  }),
  { oplog: true },
);

export const onlineRoutes = createRouter()
  .openapi(pageRoute, async (c) => c.json(okBody(await onlinePage(c.var.deps, c.var.auth, c.req.valid('json')), c.var.traceId), 200))
  .openapi(forceLogoutRoute, async (c) => {
    const revoked = await forceLogout(c.var.deps, c.var.auth, c.req.valid('json').sessionIds);
    return c.json(okBody({ revoked }, c.var.traceId), 200);
  });
