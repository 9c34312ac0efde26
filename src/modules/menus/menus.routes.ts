import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { MenuAddRequest, MenuDeleteRequest, MenuEditRequest, MenuNodeSchema, MenuSchema } from './menus.schemas.ts';
import { addMenu, deleteMenus, editMenu, menuDetail, menuTree } from './menus.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const tags = ['Menus'];
const notFound = { 404: errorResponse('No such menu') };
const stale = { 409: errorResponse('Stale version: the menu changed since it was read') };

const treeRoute = guarded(
  'sys:menu:tree',
  createRoute({
    method: 'get',
    path: '/app/sysMenu/tree',
    tags,
    summary: 'All menus (every type and status) as a tree ordered by sort, id',
    responses: okResponse('The menu forest', z.array(MenuNodeSchema)),
  }),
);

const detailRoute = guarded(
  'sys:menu:detail',
  createRoute({
    method: 'get',
    path: '/app/sysMenu/detail',
    tags,
    summary: 'One menu',
    request: { query: idQuerySchema },
    responses: { ...okResponse('The menu', MenuSchema), ...notFound },
  }),
);

const addRoute = guarded(
  'sys:menu:add',
  createRoute({
    method: 'post',
    path: '/app/sysMenu/add',
    tags,
    summary: 'Create a directory, menu or button (a permission code: super admins only)',
    description:
      'A button must carry a permission code. The parent must be 0 (root) or an existing non-button menu. Only a super administrator may set a permission code (a non-null `permission`); anyone else gets 403, so only super admins can add buttons.',
    request: { body: jsonBody(MenuAddRequest) },
    responses: { ...okResponse('The created menu', MenuSchema), ...stale },
  }),
  { oplog: true },
);

const editRoute = guarded(
  'sys:menu:edit',
  createRoute({
    method: 'post',
    path: '/app/sysMenu/edit',
    tags,
    summary: 'Change a menu (omitted fields stay); send back the version you read (a permission change: super admins only; others only a menu whose code they hold, 403 otherwise)',
    description:
      'A menu cannot be moved under itself or its descendants, nor under a button; a menu with children cannot become a button. Only a super administrator may change the `permission` code; anyone else gets 403 for a request that would change it.',
    request: { body: jsonBody(MenuEditRequest) },
    responses: { ...okResponse('The updated menu', MenuSchema), ...notFound, ...stale },
  }),
  // The current row is read first (a partial update is merged into it): with the auth statement.
  { oplog: true },
);

const deleteRoute = guarded(
  'sys:menu:delete',
  createRoute({
    method: 'post',
    path: '/app/sysMenu/delete',
    tags,
    summary: 'Delete menus and their role grants (all or nothing; a caller who is not a super admin only menus whose codes they hold, 403 otherwise)',
    description: 'Refused with 400 while a menu has children that are not deleted in the same request; 404 if an id does not exist.',
    request: { body: jsonBody(MenuDeleteRequest) },
    responses: { ...okResponse('Deleted', z.null()), ...notFound },
  }),
  { oplog: true },
);

export const menuRoutes = createRouter()
  .openapi(treeRoute, async (c) => ok(c, await menuTree(c.get('run'))))
  .openapi(detailRoute, async (c) => ok(c, await menuDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await addMenu(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await editMenu(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await deleteMenus(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  });
