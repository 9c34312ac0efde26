import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { blobResponse, SERVED_FILE_TYPES } from './download.ts';
import { IMAGE_CONTENT_TYPES } from './image-sniff.ts';
import type { AuthUser } from '../../core/caller.ts';
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
} from './files.schemas.ts';
import { blobStore, deleteFiles, downloadRow, fileDetail, KIND, pageFiles, uploadFile, type FileKind } from './files.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const notFound = { 404: errorResponse('No such record') };

const binary = z.string().openapi({ type: 'string', format: 'binary' });
/** The same binary body under each media type the content can be served with. */
const binaryContent = (types: readonly string[]) => Object.fromEntries(types.map((t) => [t, { schema: binary }]));

const SPEC = {
  file: {
    tag: 'Files',
    noun: 'file',
    record: FileSchema,
    pageRequest: FilePageRequest,
    page: FilePage,
    limit: '50 MiB',
    media: SERVED_FILE_TYPES,
    fetchCode: 'sys:file:download',
    fetchSummary: 'Download a file (attachment; ETag/304, single byte ranges; bearer token or signed link)',
  },
  image: {
    tag: 'Images',
    noun: 'image',
    record: ImageSchema,
    pageRequest: ImagePageRequest,
    page: ImagePage,
    limit: '10 MiB',
    media: Object.values(IMAGE_CONTENT_TYPES),
    fetchCode: 'sys:image:preview',
    fetchSummary: 'Show an image (inline; ETag/304, single byte ranges; bearer token or signed link)',
  },
} as const;

/** The route group of one kind: sysFile (file) or sysImage (image). */
function makeRoutes<K extends FileKind>(kind: K) {
  const { module, action } = KIND[kind];
  const s = SPEC[kind];
  // `as const` keeps the literal paths in the route types, so hc<AppType> gets .sysFile/.sysImage.
  const base = `/app/${module}` as const;
  const tags = [s.tag];
  const code = <A extends string>(a: A) => `sys:${kind}:${a}` as const;

  const uploadRoute = guarded(
    code('upload'),
    createRoute({
      method: 'post',
      path: `${base}/upload`,
      tags,
      summary:
        kind === 'image'
          ? 'Upload a PNG, JPEG, GIF or WebP image (checked by magic bytes; size from the header)'
          : 'Upload a file (streamed; identical content is stored once)',
      request: { body: uploadBody(s.limit) },
      responses: {
        ...okResponse(`The stored ${s.noun}`, s.record),
        413: errorResponse(`The ${s.noun} is over the size limit`),
        ...(kind === 'image' ? { 415: errorResponse('Not a PNG, JPEG, GIF or WebP image, corrupt, truncated or of absurd dimensions') } : {}),
      },
    }),
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
        'Also reachable without a token through the signed `url` of the record (`exp` and `sig` query parameters, bound to this action, id and expiry); a tampered or expired link is 401. Not an envelope on success.',
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
      const record = await uploadFile(c.var.deps, {
        kind,
        body: c.req.raw.body,
        contentType: c.req.header('content-type'),
        contentLength: c.req.header('content-length'),
        auth: c.var.auth,
        meta,
      });
      return ok(c, record);
    })
    .openapi(pageRoute, async (c) => ok(c, await pageFiles(c.var.deps, c.var.auth, kind, c.req.valid('json'))))
    .openapi(detailRoute, async (c) => ok(c, await fileDetail(c.var.deps, c.var.auth, kind, c.req.valid('query').id)))
    .openapi(deleteRoute, async (c) => {
      await deleteFiles(c.var.deps, c.var.auth, kind, c.req.valid('json').ids);
      return ok(c, null);
    })
    .openapi(fetchRoute, async (c) => {
      const deps = c.var.deps;
      // A bearer request is scoped to the caller; a signed link (no auth) was only handed to one who saw the record.
      const auth = c.get('auth') as AuthUser | undefined;
      const row = await downloadRow(deps, kind, c.req.valid('query').id, auth);
      return blobResponse(blobStore(deps), row, c.req.raw.headers) as never;
    });
}

export const fileRoutes = makeRoutes('file');
export const imageRoutes = makeRoutes('image');
