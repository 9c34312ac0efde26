import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { addPost, deletePosts, editPost, listPosts, pagePosts, postDetail } from './posts.service.ts';
import { PostAddRequest, PostEditRequest, PostIdsRequest, PostPage, PostPageRequest, PostSchema } from './posts.schemas.ts';

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

export const postRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pagePosts(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(listRoute, async (c) => ok(c, await listPosts(c.get('run'))))
  .openapi(detailRoute, async (c) => ok(c, await postDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await addPost(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await editPost(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await deletePosts(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  });
