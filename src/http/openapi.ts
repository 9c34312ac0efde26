import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Config } from '../config.ts';
import { exampleFor } from './openapi-examples.ts';

/**
 * The served OpenAPI document. Everything that is the same rule for every operation is derived
 * here, in one place, from what the routes declare, so a route added by any module gets it too:
 * operationId from the path, `security: []` on public operations, the statuses every operation
 * can answer (413 on every body, 500 everywhere), the response headers, timestamps as date-time,
 * the configured page-size maximum, and a request and a response example.
 */

type Obj = Record<string, any>;

/** Descriptions of the operation groups (the `tags` routes declare). Unknown tags get a generic one. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Infrastructure: 'Liveness and readiness probes; no token.',
  Authentication: 'Captcha, login and logout. Captcha and login need no token.',
  'Logged-in user': "The caller's own profile, permission codes and menu tree; any logged-in user, no permission code.",
  Users: 'User accounts, their roles, status and passwords (`sys:user:*`).',
  Roles: 'Roles, their menus and data scope (`sys:role:*`).',
  Menus: 'The menu tree: directories, menus (SPA routes) and buttons carrying permission codes (`sys:menu:*`).',
  Organisations: 'The organisation tree that data scope is expressed in (`sys:org:*`).',
  'Online users': 'Live sessions and force-logout (`sys:online:*`).',
  'Login log': 'Every login attempt, successful or not (`sys:loginLog:*`).',
  'Operation log': 'Every write operation, failures included (`sys:opLog:*`).',
  Files: 'File upload, listing and download (`sys:file:*`).',
  Images: 'Image upload (PNG, JPEG, GIF, WebP), listing and preview (`sys:image:*`).',
  Backups: 'Consistent archives of the database and its files (`sys:backup:*`).',
  Dictionaries:
    'Dictionary types and their items (`sys:dictType:*`, `sys:dictData:*`), and the cached reads every logged-in user makes for labels, options and tag colours (`sysDict`, ETag/304).',
  Parameters: 'System parameters (`sys:config:*`); the built-in ones switch behaviours at run time (captcha, initial password).',
  Notices: 'Notices and announcements with sanitised rich text (`sys:notice:*`), and the latest ones with read marks for every logged-in user.',
  Posts: 'Posts (job positions) that users hold (`sys:post:*`).',
};

/** Stable operationId derived from the path: `/app/sysUser/page` → `sysUser_page`, `/auth/login` → `auth_login`. */
export function operationIdFor(method: string, path: string, pathHasOtherMethods = false): string {
  const segments = path
    .replace(/^\/app\//, '/')
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/[^A-Za-z0-9]+(.)?/g, (_, ch: string | undefined) => (ch ? ch.toUpperCase() : '')));
  const id = segments.join('_') || 'root';
  return pathHasOtherMethods ? `${id}_${method}` : id;
}

const ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';

/** Headers every response, or some, can carry; referenced from the responses below. */
const HEADERS: Obj = {
  'X-Trace-Id': {
    description: "The request's trace id (also in the body's `traceId`); every log line of the request carries it.",
    schema: { type: 'string', pattern: '^[0-9a-f]{32}$', example: '0af7651916cd43dd8448eb211c80319c' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0, example: 600 } },
  ETag: { description: 'Strong validator: the sha256 of the content, quoted.', schema: { type: 'string', example: '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"' } },
  'Content-Disposition': {
    description: '`attachment` for files, `inline` for images, with the RFC 6266 `filename*`.',
    schema: { type: 'string', example: "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf" },
  },
  'Accept-Ranges': { description: 'Single byte ranges are supported.', schema: { type: 'string', enum: ['bytes'] } },
  'Content-Range': { description: 'The range served (206) or the full size (416).', schema: { type: 'string', example: 'bytes 0-1023/48213' } },
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Answers that any operation may give, with their meaning. */
const SHARED_ANSWERS: Record<string, string> = {
  413: 'The request body is over its limit (JSON bodies: 1 MiB)',
  500: 'Unexpected error; logged with the traceId, shown only as "Internal server error"',
  503: 'The database is busy beyond its wait; try again after Retry-After seconds',
  507: 'Storage is full (database or file storage): the write is refused whole; reads keep working',
};

/** The liveness probe touches no storage, so it can be neither busy nor full. */
const NO_STORAGE = new Set(['/health']);
/** Every page is a POST (its filters in the body) that only reads: it cannot fill storage. */
/** POST reads: pages, and exports (a download of a page's rows; its op-log row is a record, never the answer). */
const readsByPost = (path: string) => path.endsWith('/page') || path.endsWith('/export');
/** A GET that stores: with the captcha on, each challenge (and its rate-limit count) is written. */
const WRITES_BY_GET = new Set(['/auth/captcha']);

const errorAnswer = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: ENVELOPE_REF } } } });

/** Which headers a response of this status carries besides X-Trace-Id. */
function headersFor(status: string, binary: boolean, ranged: boolean): string[] {
  if (status === '429' || status === '503') return ['Retry-After'];
  if (status === '416') return ['Content-Range'];
  if (!binary) return [];
  // Downloads that declare 206 serve byte ranges with a strong ETag (files, images).
  if (status === '200') return ranged ? ['ETag', 'Content-Disposition', 'Accept-Ranges'] : ['Content-Disposition'];
  if (status === '206') return ['ETag', 'Content-Disposition', 'Accept-Ranges', 'Content-Range'];
  if (status === '304') return ['ETag', 'Accept-Ranges'];
  return [];
}

/** A different, valid-looking trace id per example, so examples don't all look alike. */
function traceIdFor(seed: string): string {
  let h = 0x811c9dc5;
  let out = '';
  for (let round = 0; round < 4; round++) {
    for (const ch of `${seed}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out;
}

function finishSchemas(doc: Obj, config: Config) {
  const visit = (node: unknown, key?: string) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((n) => visit(n));
    const o = node as Obj;
    const props = o.properties as Obj | undefined;
    if (props) {
      for (const [name, p] of Object.entries(props)) {
        const types = Array.isArray(p?.type) ? p.type : [p?.type];
        // Contract: times are ISO 8601 UTC strings, and every timestamp field is named …At.
        if (/At$/.test(name) && types.includes('string') && !p.format) p.format = 'date-time';
        if (name === 'pageSize' && types.includes('integer')) {
          p.maximum = config.PAGE_SIZE_MAX;
          p.description = `Rows per page, at most ${config.PAGE_SIZE_MAX} (PAGE_SIZE_MAX)`;
        }
        visit(p, name);
      }
    }
    for (const [k, v] of Object.entries(o)) if (k !== 'properties') visit(v, key);
  };
  visit(doc.components?.schemas);
  visit(doc.paths);
}

function finishOperation(doc: Obj, path: string, method: string, op: Obj, siblings: number) {
  const resolve = (r: string) => doc.components?.schemas?.[r.split('/').pop()!];
  op.operationId ??= operationIdFor(method, path, siblings > 1);
  if (!op.security) op.security = []; // public: no token
  op.description ??= op.summary;
  const responses = (op.responses ??= {}) as Obj;
  const hasBody = method !== 'get' && method !== 'head';
  const writes = (hasBody && !readsByPost(path)) || WRITES_BY_GET.has(path);
  if (hasBody) responses['413'] ??= errorAnswer(SHARED_ANSWERS[413]!);
  responses['500'] ??= errorAnswer(SHARED_ANSWERS[500]!);
  if (!NO_STORAGE.has(path)) responses['503'] ??= errorAnswer(SHARED_ANSWERS[503]!);
  if (writes) responses['507'] ??= errorAnswer(SHARED_ANSWERS[507]!);

  const json = op.requestBody?.content?.['application/json'];
  if (json && json.example === undefined && json.examples === undefined) json.example = exampleFor(json.schema, resolve);

  // An operation that answers with content other than JSON is a download (ETag, ranges, …).
  const binary = Object.values(responses).some((r: Obj) => Object.keys(r.content ?? {}).some((t) => t !== 'application/json'));
  const ranged = '206' in responses;
  for (const [status, res] of Object.entries(responses) as [string, Obj][]) {
    const content = (res.content ?? {}) as Obj;
    res.headers = { 'X-Trace-Id': ref('X-Trace-Id'), ...Object.fromEntries(headersFor(status, binary, ranged).map((h) => [h, ref(h)])), ...res.headers };
    const media = content['application/json'];
    if (!media || media.example !== undefined || media.examples !== undefined) continue;
    const traceId = traceIdFor(`${op.operationId}:${status}`);
    if (status.startsWith('2')) {
      const value = exampleFor(media.schema, resolve) as Obj;
      media.example = value && typeof value === 'object' && 'traceId' in value ? { ...value, traceId } : value;
    } else {
      media.example = { status: Number(status), msg: res.description, data: null, traceId };
    }
  }
}

/** The top-level tags in order of first use, each with a description. */
function tagList(doc: Obj) {
  const seen = new Set<string>();
  for (const item of Object.values(doc.paths ?? {}) as Obj[]) for (const op of Object.values(item) as Obj[]) for (const t of op.tags ?? []) seen.add(t);
  return [...seen].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations of ${name}.` }));
}

/** Builds the finished document from the app's route registry. */
export function buildOpenApiDocument(app: OpenAPIHono<any, any, any>, config: Config): Obj {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Edge Admin API',
      version: '1.0.0',
      description:
        'Back-office administration backend. Every response is the envelope `{status, msg, data, traceId}` and its HTTP status equals `status`. ' +
        'Protected operations take `Authorization: Bearer <token>` from `POST /auth/login`; each lists its permission code in `x-permission`.',
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
      contact: { name: 'Edge Admin maintainers' },
    },
  }) as Obj;
  finishSchemas(doc, config);
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Obj][]) {
    const methods = Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete', 'head'].includes(m));
    for (const m of methods) finishOperation(doc, path, m, item[m], methods.length);
  }
  doc.tags = tagList(doc);
  doc.components = { ...doc.components, headers: { ...HEADERS, ...doc.components?.headers } };
  delete doc.webhooks;
  return doc;
}

/** The document as served: `servers` from configuration (PUBLIC_URL) or relative, never the request's Host header. */
export function withServer(doc: Obj, publicUrl: string | undefined): Obj {
  const server = publicUrl
    ? { url: publicUrl, description: 'This service (PUBLIC_URL)' }
    : { url: '/', description: 'The server this document is served from (relative; set PUBLIC_URL to name it)' };
  return { ...doc, servers: [server] };
}
