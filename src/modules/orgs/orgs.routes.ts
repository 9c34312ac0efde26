import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { OrgAddRequest, OrgDeleteRequest, OrgEditRequest, OrgNodeSchema, OrgSchema } from './orgs.schemas.ts';
import { addOrg, deleteOrgs, editOrg, orgDetail, orgTree } from './orgs.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const tags = ['Organisations'];
const base = '/app/sysOrg';
const notFound = { 404: errorResponse('No such organisation in your data scope') };
const conflict = { 409: errorResponse('The code is taken, or the version is stale') };
const SCOPE =
  'Only organisations in the caller\'s data scope are visible (others answer 404 as if they did not exist); an organisation can only be placed under one in scope (403), the root only by a caller whose scope is `all`.';

const treeRoute = guarded(
  'sys:org:tree',
  createRoute({
    method: 'get',
    path: `${base}/tree`,
    tags,
    summary: "The organisations in the caller's data scope, as a tree ordered by sort, id",
    description: 'An organisation whose parent is outside the scope appears as a root.',
    responses: okResponse('The organisation forest', z.array(OrgNodeSchema)),
  }),
);

const detailRoute = guarded(
  'sys:org:detail',
  createRoute({
    method: 'get',
    path: `${base}/detail`,
    tags,
    summary: 'One organisation',
    description: SCOPE,
    request: { query: idQuerySchema },
    responses: { ...okResponse('The organisation', OrgSchema), ...notFound },
  }),
);

const addRoute = guarded(
  'sys:org:add',
  createRoute({
    method: 'post',
    path: `${base}/add`,
    tags,
    summary: 'Add an organisation (code unique case-insensitively; the parent must exist, 400, and be in scope, 403)',
    description: SCOPE,
    request: { body: jsonBody(OrgAddRequest) },
    responses: { ...okResponse('The new organisation', OrgSchema), ...conflict },
  }),
  { oplog: true },
);

const editRoute = guarded(
  'sys:org:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit or move an organisation (partial; `version` must match, else 409; never under itself or a descendant, 400)',
    description: SCOPE,
    request: { body: jsonBody(OrgEditRequest) },
    responses: { ...okResponse('The updated organisation', OrgSchema), ...notFound, ...conflict },
  }),
  { oplog: true },
);

const deleteRoute = guarded(
  'sys:org:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: 'Delete organisations, all or nothing (400 while one has children outside the request or users; 404 for an id not in scope)',
    description: `${SCOPE} Custom data scopes that listed a deleted organisation lose it.`,
    request: { body: jsonBody(OrgDeleteRequest) },
    responses: { ...okResponse('Deleted', z.null()), ...notFound },
  }),
  { oplog: true },
);

export const orgRoutes = createRouter()
  .openapi(treeRoute, async (c) => ok(c, await orgTree(c.get('run'))))
  .openapi(detailRoute, async (c) => ok(c, await orgDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await addOrg(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await editOrg(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await deleteOrgs(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  });
