import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { ApiKeyAddRequest, ApiKeyCreatedSchema, ApiKeyPage, ApiKeyPageRequest, ApiKeyRevokeRequest } from './api-keys.schemas.ts';
import { addKey, pageKeys, revokeKeys } from './api-keys.service.ts';

const tags = ['API keys'];

// Own keys need no code (contract, "API keys"); sys:apiKey:page and sys:apiKey:revoke reach the
// keys of users in the caller's scope, judged in the statements themselves (api-keys.service.ts).
const pageRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: '/app/sysApiKey/page',
    tags,
    summary: "The caller's API keys (with sys:apiKey:page: those of users in their scope)",
    request: { body: jsonBody(ApiKeyPageRequest) },
    responses: okResponse('A page of keys (never their secrets)', ApiKeyPage),
  }),
);

const addRoute = guarded(
  'sys:apiKey:add',
  createRoute({
    method: 'post',
    path: '/app/sysApiKey/add',
    tags,
    summary: 'Create an API key for the caller; the secret is in this answer only',
    description:
      'Every code must be one the caller holds now (403), and carried by a menu (400). Codes of operations no key may run (own account, API keys, role writes, role grants, second factors) are refused (400). `expiresAt` defaults to API_KEY_DEFAULT_DAYS from now and may be at most API_KEY_MAX_DAYS away (400). `allowedIps`: CIDR blocks, IPv4 or IPv6 (400 for a malformed one).',
    request: { body: jsonBody(ApiKeyAddRequest) },
    responses: okResponse('The key, with its secret (shown once)', ApiKeyCreatedSchema),
  }),
  { oplog: true },
);

const RevokeResult = z.object({ revoked: z.number().int().openapi({ description: 'Keys that were live and are now revoked' }) }).openapi('ApiKeyRevokeResult');

const revokeRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: '/app/sysApiKey/revoke',
    tags,
    summary: 'Revoke keys: own ones, or with sys:apiKey:revoke those of users in scope',
    description:
      "Unknown or already revoked ids, and keys the caller may not reach, are skipped. Another user's key needs sys:apiKey:revoke, its owner in the caller's scope and within their authority (403 \"outside your authority\", nothing changed).",
    request: { body: jsonBody(ApiKeyRevokeRequest) },
    responses: okResponse('Revoked', RevokeResult),
  }),
  { oplog: true },
);

export const apiKeyRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageKeys(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(addRoute, async (c) => ok(c, await addKey(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(revokeRoute, async (c) => ok(c, { revoked: await revokeKeys(c.get('deps'), c.get('run'), c.req.valid('json').ids) }));
