import type { Context } from 'hono';
import { createRoute, z } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Deps } from './deps.ts';
import { AppError, ERRORS, forbidden, unavailable } from './core/errors.ts';
import { carriesApiKey } from './http/auth.ts';
import { envelope, errorBody, ErrorEnvelope } from './core/envelope.ts';
import { checkReadiness, NOT_READY_RETRY_AFTER } from './core/readiness.ts';
import { captureClient } from './http/client.ts';
import { DOCS_CSP, DOCS_CSS, DOCS_HTML, DOCS_JS } from './http/docs/page.ts';
import { errorHandler, notFoundHandler } from './http/errors.ts';
import { createRouter } from './http/router.ts';
import { ensureSecurityHeaders, prepareSecurityHeaders } from './http/security-headers.ts';
import { DbMeter } from './db/meter.ts';
import { Runner } from './db/runner.ts';
import { newTraceId, traceIdFromParent } from './http/trace.ts';
import { BOOKMARK_HEADER, validBookmark } from './http/bookmark.ts';
import './http/context.ts';
import { apiKeyRoutes } from './modules/api-keys/index.ts';
import { authRoutes } from './modules/auth/index.ts';
import { backupRoutes } from './modules/backups/index.ts';
import { configRoutes } from './modules/config/index.ts';
import { dictRoutes } from './modules/dict/index.ts';
import { fileRoutes, imageRoutes } from './modules/files/index.ts';
import { jobLogRoutes, jobRoutes } from './modules/jobs/index.ts';
import { loginUserRoutes } from './modules/login-user/index.ts';
import { loginLogRoutes } from './modules/login-logs/index.ts';
import { menuRoutes } from './modules/menus/index.ts';
import { mfaRoutes } from './modules/mfa/index.ts';
import { noticeRoutes } from './modules/notices/index.ts';
import { onlineRoutes } from './modules/online/index.ts';
import { opLogRoutes } from './modules/op-logs/index.ts';
import { orgRoutes } from './modules/orgs/index.ts';
import { postRoutes } from './modules/posts/index.ts';
import { roleRoutes } from './modules/roles/index.ts';
import { userRoutes } from './modules/users/index.ts';
import { ok } from './http/respond.ts';
import { buildOpenApiDocument, withServer } from './http/openapi.ts';
import { RUOYI_IMPORT_PATH, ruoyiDialect } from './compat/ruoyi/index.ts';
import { vbenDialect } from './compat/vben/index.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;
const NO_STORE = /^\/(auth|app\/sysLoginUser)(\/|$)/;

/**
 * Cache-Control by who asked: every answer of /auth and sysLoginUser, and every JSON answer to a
 * request carrying a token, is `no-store` (tokens, profiles and scoped records must never sit in a
 * browser or proxy cache); any other answer to a request with a token or a signed link (downloads,
 * previews, exports) is at least `private`, whatever the route set. Answers nobody signed for
 * (health, the docs) keep theirs.
 */
function setCacheControl(req: Request, path: string, headers: Headers) {
  const tokened = req.headers.has('authorization');
  const json = (headers.get('content-type') ?? '').startsWith('application/json');
  if (NO_STORE.test(path) || (tokened && json)) {
    headers.set('Cache-Control', 'no-store');
    return;
  }
  if (!tokened && !/[?&]sig=/.test(req.url)) return;
  if (!/\b(private|no-store)\b/i.test(headers.get('cache-control') ?? '')) headers.set('Cache-Control', 'private, no-cache');
}

const healthRoute = createRoute({
  method: 'get',
  path: '/health',
  tags: ['Infrastructure'],
  summary: 'Liveness probe',
  responses: {
    200: { description: 'Alive', content: { 'application/json': { schema: envelope(z.object({ ok: z.literal(true) })) } } },
  },
});

const readyRoute = createRoute({
  method: 'get',
  path: '/health/ready',
  tags: ['Infrastructure'],
  summary: 'Readiness probe',
  description:
    'For load balancers and orchestrators: 200 when the database passed its start-up integrity check and answers a query and the ' +
    'file storage is writable with free space above MIN_FREE_MB; 503 with Retry-After otherwise, while starting and while shutting down.',
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: envelope(z.object({ ok: z.literal(true) })) } } },
    503: {
      description: 'Not ready (msg says why)',
      headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait' } },
      content: { 'application/json': { schema: ErrorEnvelope } },
    },
  },
});

/** Builds the whole HTTP app from its dependencies; the only place route groups are mounted. */
export function createApp(deps: Deps) {
  const { config, log } = deps;

  const app = createRouter();
  const corsMiddleware = cors({
    origin: (origin) => (config.CORS_ORIGINS.includes(origin) ? origin : null),
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type', 'traceparent', 'If-None-Match', BOOKMARK_HEADER],
    exposeHeaders: ['X-Trace-Id', 'Retry-After', 'Content-Disposition', 'ETag', 'Content-Range', BOOKMARK_HEADER],
    maxAge: 600,
  });
  const vben = vbenDialect(config);
  const jsonLimit = bodyLimit({
    maxSize: JSON_BODY_LIMIT,
    onError: () => {
      throw new AppError('PAYLOAD_TOO_LARGE', 'Request body exceeds the 1 MiB limit');
    },
  });
  // One front middleware instead of four: each Hono middleware layer costs a promise hop on every
  // request. Order: trace id and deps → security headers → CORS (only when the browser sent an
  // Origin) → JSON body limit (not for GET; uploads and the users import read with their own limits).
  const onError = errorHandler(log, (err) => deps.classifyError?.(err));
  // The RuoYi dialect's user import reads its multipart body under the import's limit, as ours does.
  const ruoyiImportPath = config.RUOYI_API_PREFIX ? config.RUOYI_API_PREFIX + RUOYI_IMPORT_PATH : undefined;
  app.use('*', async (c, next) => {
    const traceId = traceIdFromParent(c.req.header('traceparent')) ?? newTraceId();
    // Per request: the database calls its runner makes, counted for the Server-Timing header.
    const meter = config.SERVER_TIMING ? new DbMeter() : undefined;
    // Read replication (D1, when on): this request's sessions, from the bookmark the client sent
    // back (a malformed one is ignored). Everything runs on the primary session until a read
    // route's caller has been judged (Runner.authenticate with replicaReads).
    const sessions = deps.replication?.(validBookmark(c.req.header(BOOKMARK_HEADER)));
    c.set('deps', deps);
    c.set('run', sessions ? new Runner(sessions.primary, meter, sessions.replica) : new Runner(deps, meter));
    c.set('traceId', traceId);
    // Before the body limit, which may replace c.req.raw and with it the peer address.
    c.set('client', captureClient(deps, c.req.raw, c.env));
    c.header('X-Trace-Id', traceId);
    prepareSecurityHeaders(c);
    const started = config.LOG_REQUESTS ? deps.clock.now() : 0;
    const method = c.req.method;
    // While stopping, requests that arrive on kept-alive connections are turned away (the ones
    // already running finish); new connections are no longer accepted at all.
    if (deps.lifecycle && deps.lifecycle.state !== 'ready' && !c.req.path.startsWith('/health')) {
      c.res = c.json(errorBody(503, ERRORS.UNAVAILABLE.msg, traceId), 503, { 'Retry-After': String(NOT_READY_RETRY_AFTER), Connection: 'close' });
      ensureSecurityHeaders(c.res.headers);
      return;
    }
    const limited =
      method !== 'GET' && method !== 'HEAD' && !c.req.path.endsWith('/upload') && c.req.path !== '/app/sysUser/import' && c.req.path !== ruoyiImportPath;
    const inner = limited ? async () => void (await jsonLimit(c, next)) : next;
    try {
      // CORS answers a preflight itself with a Response; Hono's compose would adopt it, so do we.
      const cors = vben && c.req.path.startsWith(`${vben.prefix}/`) ? vben.cors : corsMiddleware;
      const answered = await (c.req.header('origin') !== undefined ? cors(c, inner) : inner());
      if (answered instanceof Response) c.res = answered;
    } catch (err) {
      // Failures of this layer itself (the body limit) get the same envelope and headers as the rest.
      c.res = await onError(err as Error, c);
    }
    const headers = c.res.headers;
    if (!headers.has('X-Trace-Id')) headers.set('X-Trace-Id', traceId);
    ensureSecurityHeaders(headers);
    // No shared cache keeps one user's data for another (contract: "Authentication").
    setCacheControl(c.req.raw, c.req.path, headers);
    if (meter) headers.append('Server-Timing', meter.header());
    const bookmark = sessions?.bookmark();
    if (bookmark) headers.set(BOOKMARK_HEADER, bookmark);
    if (config.LOG_REQUESTS) {
      log.log('info', 'request', { traceId, method, path: c.req.path, status: c.res.status, ms: deps.clock.now() - started });
    }
  });
  app.onError(onError);
  // An API key never logs in, out or through a second factor (contract, "API keys"): 403.
  app.use('/auth/*', async (c, next) => {
    if (carriesApiKey(c)) throw forbidden('An API key cannot be used on /auth/* (log in with a password instead)');
    await next();
  });
  app.notFound(notFoundHandler);

  const routes = app
    .openapi(healthRoute, (c) => ok(c, { ok: true as const }))
    .openapi(readyRoute, async (c) => {
      const report = await checkReadiness(deps);
      if (!report.ok) throw unavailable(NOT_READY_RETRY_AFTER, `Not ready: ${report.reason}`);
      return ok(c, { ok: true as const });
    })
    .route('/', authRoutes)
    .route('/', loginUserRoutes)
    .route('/', mfaRoutes)
    .route('/', userRoutes)
    .route('/', roleRoutes)
    .route('/', menuRoutes)
    .route('/', orgRoutes)
    .route('/', onlineRoutes)
    .route('/', loginLogRoutes)
    .route('/', opLogRoutes)
    .route('/', fileRoutes)
    .route('/', imageRoutes)
    .route('/', backupRoutes)
    .route('/', jobRoutes)
    .route('/', jobLogRoutes)
    .route('/', dictRoutes)
    .route('/', configRoutes)
    .route('/', noticeRoutes)
    .route('/', postRoutes)
    .route('/', apiKeyRoutes);

  // The RuoYi-Vue3 dialect (docs/ruoyi.md): off unless RUOYI_API_PREFIX names where it lives.
  if (config.RUOYI_API_PREFIX) app.route(config.RUOYI_API_PREFIX, ruoyiDialect(config.RUOYI_API_PREFIX));
  // The vue-vben-admin dialect (docs/vben.md): off unless VBEN_API_PREFIX names where it lives.
  if (vben) app.route(vben.prefix, vben.routes);

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'The token from POST /auth/login. Each operation lists its permission code in x-permission.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ea_<id>_<secret>',
    description:
      "An API key from POST /app/sysApiKey/add, as `Authorization: Bearer ea_…` (docs/api-keys.md). Offered on the operations a key may run: it passes when the operation's code is among the key's codes AND its owner holds it now.",
  });
  if (config.DOCS_ENABLED) {
    let doc: ReturnType<typeof buildOpenApiDocument> | undefined;
    app.get('/openapi.json', (c) => {
      doc ??= buildOpenApiDocument(app, config);
      return c.json(withServer(doc, config.PUBLIC_URL));
    });
    // Our own page and assets (src/http/docs), never a CDN script: see page.ts.
    const asset = (body: string, type: string) => (c: Context) =>
      c.body(body, 200, { 'Content-Type': `${type}; charset=utf-8`, 'Content-Security-Policy': DOCS_CSP, 'Cache-Control': 'no-cache' });
    app.get('/docs', asset(DOCS_HTML, 'text/html'));
    app.get('/docs/docs.js', asset(DOCS_JS, 'text/javascript'));
    app.get('/docs/docs.css', asset(DOCS_CSS, 'text/css'));
  }
  return routes;
}

export type AppType = ReturnType<typeof createApp>;
