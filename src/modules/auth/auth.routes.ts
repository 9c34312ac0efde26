import type { Context } from 'hono';
import { AppError } from '../../core/errors.ts';
import { describeZodError } from '../../http/errors.ts';
import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { commonErrors, createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { issueCaptcha } from './captcha.service.ts';
import { login, logout } from './login.service.ts';
import { loginClient, recordRefusedLogin } from './login-attempt.ts';
import { CaptchaSchema, LoginAnswer, LoginRequest, PasskeyOptionsRequest, VerifyRequest, VerifyResult } from './auth.schemas.ts';
import { loginPasskeyOptions, verifyLogin } from './login-factor.ts';
import { PasskeyRequestOptions } from '../mfa/index.ts';
import { ok, okResponse } from '../../http/respond.ts';

async function refuseLoginBody(c: Context, error: z.ZodError, raw: unknown): Promise<never> {
  const err = new AppError('BAD_REQUEST', describeZodError(error));
  const named = raw && typeof raw === 'object' ? (raw as { loginName?: unknown }).loginName : undefined;
  await recordRefusedLogin(c, typeof named === 'string' ? named.trim() : '', err.message);
  throw err;
}

/** A refused verify body is an attempt too (its login name is not known: the row names none). */
async function refuseVerifyBody(c: Context, error: z.ZodError): Promise<never> {
  const err = new AppError('BAD_REQUEST', describeZodError(error));
  await recordRefusedLogin(c, '', err.message);
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
  description:
    'For an account with a second factor the answer is a challenge (`mfa: true`, `token: null`) and no session exists yet: send it to /auth/login/verify with a factor.',
  request: { body: jsonBody(LoginRequest) },
  responses: {
    ...okResponse('A new session token, or a second-factor challenge', LoginAnswer),
    400: commonErrors[400],
    401: { ...commonErrors[401], description: 'Wrong login name or password (one message for both)' },
    403: { ...commonErrors[403], description: 'The account is disabled' },
    429: errorResponse('Too many failed attempts; see Retry-After'),
  },
});

const verifyRoute = createRoute({
  method: 'post',
  path: '/auth/login/verify',
  tags: ['Authentication'],
  summary: 'Second step of a login with a second factor: the challenge and one factor → a session token',
  request: { body: jsonBody(VerifyRequest) },
  responses: {
    ...okResponse('A new session token', VerifyResult),
    400: commonErrors[400],
    401: { ...commonErrors[401], description: 'Wrong code, or the challenge expired or was used' },
    403: { ...commonErrors[403], description: 'The account is disabled' },
    429: errorResponse('Too many failed attempts for this login name or address (passwords and codes count together); see Retry-After'),
  },
});

const passkeyOptionsRoute = createRoute({
  method: 'post',
  path: '/auth/login/passkeyOptions',
  tags: ['Authentication'],
  summary: "Options for navigator.credentials.get() for a login challenge (the account's passkeys)",
  request: { body: jsonBody(PasskeyOptionsRequest) },
  responses: {
    ...okResponse('WebAuthn request options', PasskeyRequestOptions),
    400: commonErrors[400],
    401: { ...commonErrors[401], description: 'The challenge expired or was used' },
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
  { primary: true, mfaEnrolment: true },
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
  .openapi(
    verifyRoute,
    async (c) => ok(c, await verifyLogin(c.get('deps'), c.get('run'), c.req.valid('json'), loginClient(c))),
    (result, c) => (result.success ? undefined : refuseVerifyBody(c, result.error)),
  )
  .openapi(passkeyOptionsRoute, async (c) => ok(c, await loginPasskeyOptions(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(logoutRoute, async (c) => {
    await logout(c.get('deps'), c.get('run'));
    return ok(c, null);
  });
