import type { MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { BOOKMARK_HEADER } from '../../http/bookmark.ts';

/**
 * vben's request client (packages/effects/request) takes `data` when the HTTP status is 2xx and
 * `code === 0`, and shows `error ?? message` otherwise. Every answer under the prefix, errors of
 * the shared error mapper included, is rewritten from our `{status, msg, data, traceId}` into
 * `{code, data, error, message}`: the rules and their messages stay ours, only the wrapping
 * changes. `traceId` stays on errors so a user can quote it.
 */
export const vbenEnvelope: MiddlewareHandler = async (c, next) => {
  await next();
  const res = c.res;
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return;
  const body = (await res
    .clone()
    .json()
    .catch(() => undefined)) as { status?: unknown; msg?: unknown; data?: unknown; traceId?: unknown } | undefined;
  if (!body || typeof body !== 'object' || typeof body.status !== 'number' || typeof body.msg !== 'string') return;
  const out =
    body.status === 200
      ? { code: 0, data: body.data, error: null, message: 'ok' }
      : { code: -1, data: null, error: body.msg, message: body.msg, traceId: body.traceId };
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  headers.set('Cache-Control', 'no-store');
  c.res = undefined;
  c.res = new Response(JSON.stringify(out), { status: res.status, headers });
};

/**
 * vben's client sends credentials (`withCredentials` on login, logout and refresh) and uses PUT and
 * DELETE, so its prefix needs what the rest of the API never grants: `Allow-Credentials: true` and
 * those methods, for the origins of CORS_ORIGINS only. The one cookie is the logout cookie
 * (core.routes.ts), which ends a session and authenticates nothing.
 */
export function vbenCors(origins: readonly string[]): MiddlewareHandler {
  return cors({
    origin: (origin) => (origins.includes(origin) ? origin : null),
    allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'Accept-Language', 'traceparent', BOOKMARK_HEADER],
    exposeHeaders: ['X-Trace-Id', 'Retry-After', BOOKMARK_HEADER],
    credentials: true,
    maxAge: 600,
  });
}
