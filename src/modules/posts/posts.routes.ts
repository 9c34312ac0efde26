import type { Context } from 'hono';
import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { addPost, deletePosts, editPost, listPosts, pagePosts, postDetail } from './posts.service.ts';
import { PostAddRequest, PostEditRequest, PostIdsRequest, PostPage, PostPageParams, PostPageRequest, PostSchema } from './posts.schemas.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { postFilter } from './posts.service.ts';

const tags = ['Posts'];
const base = '/app/sysPost';
const notFound = { 404: errorResponse('No such post') };
const conflict = { 409: errorResponse('The code is taken, or the version is stale') };

const pageRoute = guarded(
  'sys:post:page',
  createRoute({ method: 'post', path: `${base}/page`, tags, summary: 'Page of posts (job positions)', request: { body: jsonBody(PostPageRequest) }, responses: okResponse('A page of posts', PostPage) }),
);
const listRoute = guarded(
  'sys:post:list',
  createRoute({ method: 'get', path: `${base}/list`, tags, summary: 'Every enabled post, by sort (for pickers)', responses: okResponse('The enabled posts', z.array(PostSchema)) }),
);
const detailRoute = guarded(
  'sys:post:detail',
  createRoute({ method: 'get', path: `${base}/detail`, tags, summary: 'One post', request: { query: idQuerySchema }, responses: { ...okResponse('The post', PostSchema), ...notFound } }),
);
const addRoute = guarded(
  'sys:post:add',
  createRoute({ method: 'post', path: `${base}/add`, tags, summary: 'Add a post (code unique: 409)', request: { body: jsonBody(PostAddRequest) }, responses: { ...okResponse('The new post', PostSchema), ...conflict } }),
  { oplog: true },
);
const editRoute = guarded(
  'sys:post:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit a post (partial; `version` must match, else 409)',
    request: { body: jsonBody(PostEditRequest) },
    responses: { ...okResponse('The updated post', PostSchema), ...notFound, ...conflict },
  }),
  { oplog: true },
);
const deleteRoute = guarded(
  'sys:post:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: 'Delete posts, all or nothing (400 while a user holds one; unknown ids are ignored)',
    request: { body: jsonBody(PostIdsRequest) },
    responses: okResponse('Deleted', z.null()),
  }),
  { oplog: true },
);

const exportRequest = exportRequestSchema('PostExportRequest', PostPageParams);
const exportPostsRoute = exportRoute('sys:post:export', base, tags, 'posts', exportRequest);

/** The posts export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportPosts(c: Context, params: Parameters<typeof postFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'posts',
    rows: postFilter(params),
    select: (q) => q.selectAll('posts'),
    keys: ['posts.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Code', value: (r) => r.code },
      { header: 'Name', value: (r) => r.name },
      { header: 'Sort', value: (r) => r.sort },
      { header: 'Status', value: (r) => r.status, dict: 'sys_normal_disable' },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const postRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pagePosts(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(listRoute, async (c) => ok(c, await listPosts(c.get('run'))))
  .openapi(detailRoute, async (c) => ok(c, await postDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await addPost(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await editPost(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await deletePosts(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(exportPostsRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportPosts(c, params, format)) as never;
  });
