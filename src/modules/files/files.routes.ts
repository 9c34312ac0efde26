import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { blobResponse, SERVED_FILE_TYPES } from './download.ts';
import { IMAGE_CONTENT_TYPES } from './image-sniff.ts';
import type { Context } from 'hono';
import type { PermissionCode } from '../../core/permissions.ts';
import type { LinkAction } from '../../core/signed-links.ts';
import {
  DownloadQuery,
  FileIdsRequest,
  FilePage,
  FilePageRequest,
  FileSchema,
  ImagePage,
  ImagePageRequest,
  ImageSchema,
  uploadBody,
  type FileRecord,
  type ImageRecord,
} from './files.schemas.ts';
import { blobStore, deleteFiles, downloadRow, fileDetail, KIND, pageFiles, uploadFile, type FileKind } from './files.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const notFound = { 404: errorResponse('No such record') };

const binary = z.string().openapi({ type: 'string', format: 'binary' });
/** The same binary body under each media type the content can be served with. */
const binaryContent = (types: readonly string[]) => Object.fromEntries(types.map((t) => [t, { schema: binary }]));

/**
 * What differs between the two route groups. Everything a typed client sees is its own type
 * parameter here, so each group's route types stay per kind (a file record is not an image record).
 */
interface KindSpec<K extends FileKind, M extends string, A extends LinkAction, R extends z.ZodType, P extends z.ZodType, X extends object> {
  kind: K;
  module: M;
  action: A;
  tag: string;
  noun: string;
  record: R;
  pageRequest: typeof FilePageRequest; // the same for both kinds (only its name differs)
  page: P;
  limit: string;
  media: readonly string[];
  uploadSummary: string;
  uploadErrors: X;
  fetchCode: PermissionCode;
  fetchSummary: string;
}

const FILE = {
  ...KIND.file,
  kind: 'file',
  tag: 'Files',
  noun: 'file',
  record: FileSchema,
  pageRequest: FilePageRequest,
  page: FilePage,
  limit: '50 MiB',
  media: SERVED_FILE_TYPES,
  uploadSummary: 'Upload a file (streamed; identical content is stored once)',
  uploadErrors: {},
  fetchCode: 'sys:file:download',
  fetchSummary: 'Download a file (attachment; ETag/304, single byte ranges; bearer token or signed link)',
} as const;

const IMAGE = {
  ...KIND.image,
  kind: 'image',
  tag: 'Images',
  noun: 'image',
  record: ImageSchema,
  pageRequest: ImagePageRequest,
  page: ImagePage,
  limit: '10 MiB',
  media: Object.values(IMAGE_CONTENT_TYPES),
  uploadSummary: 'Upload a PNG, JPEG, GIF or WebP image (checked by magic bytes; size from the header)',
  uploadErrors: { 415: errorResponse('Not a PNG, JPEG, GIF or WebP image, corrupt, truncated or of absurd dimensions') },
  fetchCode: 'sys:image:preview',
  fetchSummary: 'Show an image (inline; ETag/304, single byte ranges; bearer token or signed link)',
} as const;

/**
 * `ok` for the answers typed by the kind's record schema (page, detail). The services type a record
 * as the file-or-image union, and inside the generic factory TypeScript cannot follow `s.kind` to
 * `s.record`; the route declares the kind's own schema (what hc<AppType> shows), and the conformance
 * test validates every answer against it at run time.
 */
const okOfKind = (c: Context, data: FileRecord | ImageRecord | { records: (FileRecord | ImageRecord)[] }) => ok(c, data) as never;

/**
 * The route group of one kind: sysFile (file) or sysImage (image). Generic over each part of the
 * spec, not over the kind: a lookup `SPEC[kind]` widens every route's types to the file-or-image union.
 */
function makeRoutes<K extends FileKind, M extends string, A extends LinkAction, R extends z.ZodType, P extends z.ZodType, X extends object>(
  s: KindSpec<K, M, A, R, P, X>,
) {
  const { kind, module, action } = s;
  // `as const` keeps the literal paths in the route types, so hc<AppType> gets .sysFile/.sysImage.
  const base = `/app/${module}` as const;
  const tags = [s.tag];
  const code = <V extends string>(verb: V) => `sys:${kind}:${verb}` as const;

  const uploadRoute = guarded(
    code('upload'),
    createRoute({
      method: 'post',
      path: `${base}/upload`,
      tags,
      summary: s.uploadSummary,
      request: { body: uploadBody(s.limit) },
      responses: {
        ...okResponse(`The stored ${s.noun}`, s.record),
        413: errorResponse(`The ${s.noun} is over the size limit`),
        ...s.uploadErrors,
      },
    }),
    // Deferred auth for writes: the auth statement travels with the content reservation (one round
    // trip on D1); a body that would reach storage before it checks the caller first (beforeWrite).
    { oplog: true },
  );

  const pageRoute = guarded(
    code('page'),
    createRoute({
      method: 'post',
      path: `${base}/page`,
      tags,
      summary: `Page through ${s.noun}s`,
      request: { body: jsonBody(s.pageRequest) },
      responses: okResponse(`A page of ${s.noun}s`, s.page),
    }),
  );

  const detailRoute = guarded(
    code('detail'),
    createRoute({
      method: 'get',
      path: `${base}/detail`,
      tags,
      summary: `One ${s.noun}`,
      request: { query: idQuerySchema },
      responses: { ...okResponse(`The ${s.noun}`, s.record), ...notFound },
    }),
  );

  const deleteRoute = guarded(
    code('delete'),
    createRoute({
      method: 'post',
      path: `${base}/delete`,
      tags,
      summary: `Delete ${s.noun}s; stored content goes with its last record`,
      request: { body: jsonBody(FileIdsRequest) },
      responses: okResponse('Deleted (unknown ids are ignored)', z.null()),
    }),
    { oplog: true },
  );

  const fetchRoute = guarded(
    s.fetchCode,
    createRoute({
      method: 'get',
      path: `${base}/${action}`,
      tags,
      summary: s.fetchSummary,
      description:
        'Also reachable without a token through the signed `url` of the record (`exp`, `s` and `sig` query parameters, bound to this action, id, the session that got it and the expiry); a tampered or expired link, or one whose session has ended (logout, force logout, password change or reset, disable, delete), is 401. Not an envelope on success.',
      request: { query: DownloadQuery },
      responses: {
        200: { description: 'The content (not an envelope)', content: binaryContent(s.media) },
        206: { description: 'The requested byte range (not an envelope)', content: binaryContent(s.media) },
        304: { description: 'Not modified (If-None-Match matched the ETag)' },
        ...notFound,
        416: errorResponse('Range not satisfiable'),
      },
    }),
    { signedLink: action },
  );

  const router = createRouter();
  router.openAPIRegistry.registerComponent('securitySchemes', 'signedLink', {
    type: 'apiKey',
    in: 'query',
    name: 'sig',
    description: 'The `url` of a file or image record: `id`, `exp` and `sig` query parameters, valid until `exp`.',
  });
  return router
    .openapi(uploadRoute, async (c) => {
      const meta: Record<string, unknown> = {};
      c.set('opParams', meta);
      const record = await uploadFile(c.get('deps'), c.get('run'), {
        kind,
        body: c.req.raw.body,
        contentType: c.req.header('content-type'),
        contentLength: c.req.header('content-length'),
        meta,
      });
      return ok(c, record);
    })
    .openapi(pageRoute, async (c) => okOfKind(c, await pageFiles(c.get('deps'), c.get('run'), kind, c.req.valid('json'))))
    .openapi(detailRoute, async (c) => okOfKind(c, await fileDetail(c.get('deps'), c.get('run'), kind, c.req.valid('query').id)))
    .openapi(deleteRoute, async (c) => {
      await deleteFiles(c.get('deps'), c.get('run'), kind, c.req.valid('json').ids);
      return ok(c, null);
    })
    .openapi(fetchRoute, async (c) => {
      // A bearer request is scoped to the caller; a signed link (no caller) was only handed to one who saw the record.
      const session = c.get('linkSession');
      const link = session ? { session, now: new Date(c.get('deps').clock.now()).toISOString() } : undefined;
      const row = await downloadRow(c.get('run'), kind, c.req.valid('query').id, link);
      return blobResponse(blobStore(c.get('deps')), row, c.req.raw.headers) as never;
    });
}

export const fileRoutes = makeRoutes(FILE);
export const imageRoutes = makeRoutes(IMAGE);
