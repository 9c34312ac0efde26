import type { Context } from 'hono';
import { AppError } from '../../core/errors.ts';
import { describeZodError } from '../../http/errors.ts';
import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { clientInfo } from '../../http/client.ts';
import { commonErrors, createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { issueCaptcha } from './captcha.service.ts';
import { login, loginLogRow, logout } from './login.service.ts';
import { CaptchaSchema, LoginRequest, LoginResult } from './auth.schemas.ts';
import { ok, okResponse } from '../../http/respond.ts';

/** Who is attempting: address, device and, on Workers, location. */
function loginClient(c: Context) {
  return { ...clientInfo(c), traceId: c.get('traceId') };
}

async function refuseLoginBody(c: Context, error: z.ZodError, raw: unknown): Promise<never> {
  const err = new AppError('BAD_REQUEST', describeZodError(error));
  const named = raw && typeof raw === 'object' ? (raw as { loginName?: unknown }).loginName : undefined;
  const name = typeof named === 'string' ? named.trim() : '';
  await c.get('run').record([loginLogRow(c.get('deps').clock, loginClient(c), name, 'failure', err.message, null)]);
  throw err;
}

const captchaRoute = createRoute({
  method: 'get',
  path: '/auth/captcha',
  tags: ['Authentication'],
  summary: 'Issue a verification code (SVG image)',
  responses: {
    ...okResponse('A new code', CaptchaSchema),
    429: errorResponse('Too many code requests from this client; see Retry-After'),
  },
});

const loginRoute = createRoute({
  method: 'post',
  path: '/auth/login',
  tags: ['Authentication'],
  summary: 'Log in with login name, password and verification code',
  request: { body: jsonBody(LoginRequest) },
  responses: {
    ...okResponse('A new session token', LoginResult),
    400: commonErrors[400],
    401: { ...commonErrors[401], description: 'Wrong login name or password (one message for both)' },
    403: { ...commonErrors[403], description: 'The account is disabled' },
    429: errorResponse('Too many failed attempts; see Retry-After'),
  },
});

const logoutRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: '/auth/logout',
    tags: ['Authentication'],
    summary: "Revoke the caller's own session",
    responses: okResponse('Logged out', z.null()),
  }),
  { primary: true },
);

export const authRoutes = createRouter()
  .openapi(captchaRoute, async (c) => {
    const deps = c.get('deps');
    return ok(c, await issueCaptcha(deps, c.get('run'), c.get('client').ip));
  })
  .openapi(
    loginRoute,
    async (c) => {
      const result = await login(c.get('deps'), c.get('run'), c.req.valid('json'), loginClient(c));
      return ok(c, result);
    },
    // A refused body is an attempt too: it gets its login-log row before the usual 400.
    (result, c) => (result.success ? undefined : refuseLoginBody(c, result.error, (result as { data?: unknown }).data)),
  )
  .openapi(logoutRoute, async (c) => {
    await logout(c.get('deps'), c.get('run'));
    return ok(c, null);
  });
