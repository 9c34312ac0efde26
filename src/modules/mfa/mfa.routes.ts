import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { AppError } from '../../core/errors.ts';
import { describeZodError } from '../../http/errors.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import {
  CodeRequest,
  DeletePasskeyRequest,
  DisableTotpRequest,
  MfaStatus,
  PasskeyCreationOptions,
  RecoveryCodes,
  RegisterPasskeyRequest,
  RegisterPasskeyResult,
  TotpStart,
} from './mfa.schemas.ts';
import { confirmTotp, deletePasskey, disableTotp, mfaStatus, passkeyOptions, regenerateRecoveryCodes, registerPasskey, startTotp } from './mfa.service.ts';

const tags = ['Second factor'];
const BASE = '/app/sysLoginUser/mfa';

/** Fields of these bodies that never reach the op log (codes, passwords, WebAuthn answers). */
const SECRET_FIELDS = new Set(['code', 'recoveryCode', 'password', 'response', 'passkey', 'challenge']);

export function redactMfa(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? '[REDACTED]' : v]));
}

/** Validation hook: the op log gets the body with its secrets redacted (refused bodies too), then the usual 400. */
export const redactingHook = (result: { success: boolean; error?: unknown; data?: unknown }, c: Context) => {
  c.set('opParams', redactMfa(result.data));
  if (!result.success) throw new AppError('BAD_REQUEST', describeZodError(result.error as z.ZodError));
  return undefined;
};

/** Own-account second-factor routes: any logged-in user, open to a session restricted to enrolling. */
const WRITE = { oplog: true, mfaEnrolment: true } as const;

const statusRoute = guarded(
  null,
  createRoute({ tags, method: 'get', path: `${BASE}/status`, summary: "The caller's second factors (never a secret)", responses: okResponse('State', MfaStatus) }),
  { mfaEnrolment: true },
);
const startRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/totp/start`,
  summary: 'Start TOTP enrolment: a new secret, its otpauth:// URI and QR code (not active until confirmed)',
  responses: okResponse('The secret, shown this once', TotpStart),
}),
  WRITE,
);
const confirmRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/totp/confirm`,
  summary: 'Confirm TOTP enrolment with a first code: the factor is active; 10 recovery codes (shown once)',
  request: { body: jsonBody(CodeRequest) },
  responses: okResponse('Recovery codes', RecoveryCodes),
}),
  WRITE,
);
const disableRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/totp/disable`,
  summary: 'Turn TOTP off (the password and a current code)',
  request: { body: jsonBody(DisableTotpRequest) },
  responses: { ...okResponse('Disabled', z.null()), 429: errorResponse('Too many wrong codes; see Retry-After') },
}),
  WRITE,
);
const recoveryRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/recoveryCodes`,
  summary: 'New recovery codes (a current TOTP code); the old ones stop working',
  request: { body: jsonBody(CodeRequest) },
  responses: okResponse('Recovery codes', RecoveryCodes),
}),
  WRITE,
);
const passkeyOptionsRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/passkey/options`,
  summary: 'Options for navigator.credentials.create() (valid 5 minutes, for this session)',
  responses: okResponse('WebAuthn creation options', PasskeyCreationOptions),
}),
  WRITE,
);
const passkeyRegisterRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/passkey/register`,
  summary: 'Register the passkey that answered the options',
  request: { body: jsonBody(RegisterPasskeyRequest) },
  responses: okResponse('The passkey (and recovery codes if it is the first factor)', RegisterPasskeyResult),
}),
  WRITE,
);
const passkeyDeleteRoute = guarded(
  null,
  createRoute({
  tags,
  method: 'post',
  path: `${BASE}/passkey/delete`,
  summary: "Remove one of one's own passkeys",
  request: { body: jsonBody(DeletePasskeyRequest) },
  responses: { ...okResponse('Removed', z.null()), 404: errorResponse('No such passkey of the caller') },
}),
  WRITE,
);

export const mfaRoutes = createRouter()
  .openapi(statusRoute, async (c) => ok(c, await mfaStatus(c.get('run'))))
  .openapi(startRoute, async (c) => ok(c, await startTotp(c.get('deps'), c.get('run'))))
  .openapi(confirmRoute, async (c) => ok(c, await confirmTotp(c.get('deps'), c.get('run'), c.req.valid('json'))), (r, c) => redactingHook(r, c))
  .openapi(
    disableRoute,
    async (c) => {
      await disableTotp(c.get('deps'), c.get('run'), c.req.valid('json'));
      return ok(c, null);
    },
    (r, c) => redactingHook(r, c),
  )
  .openapi(recoveryRoute, async (c) => ok(c, await regenerateRecoveryCodes(c.get('deps'), c.get('run'), c.req.valid('json'))), (r, c) => redactingHook(r, c))
  .openapi(passkeyOptionsRoute, async (c) => ok(c, await passkeyOptions(c.get('deps'), c.get('run'))))
  .openapi(
    passkeyRegisterRoute,
    async (c) => {
      const body = c.req.valid('json');
      return ok(c, await registerPasskey(c.get('deps'), c.get('run'), { response: body.response as never, name: body.name }));
    },
    (r, c) => redactingHook(r, c),
  )
  .openapi(
    passkeyDeleteRoute,
    async (c) => {
      await deletePasskey(c.get('run'), c.req.valid('json'));
      return ok(c, null);
    },
    (r, c) => redactingHook(r, c),
  );
