import type { Context } from 'hono';
import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { idsRequest, statusRequest } from '../../core/schemas.ts';
import { RoleSchema } from './role.model.ts';
import { AddRoleRequest, EditRoleRequest, GrantDataScopeRequest, GrantMenuRequest, RolePage, RolePageRequest } from './roles.schemas.ts';
import * as roles from './roles.service.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { RolePageParams } from './roles.schemas.ts';

const tags = ['Roles'];
const IdsRequest = idsRequest('RoleIdsRequest');
const ChangeStatusRequest = statusRequest('RoleStatusRequest');
const base = '/app/sysRole';
const notFound = { 404: errorResponse('No such role') };
/** Containment, stated on every write it applies to. */
const CONTAINED =
  'A caller who is not a super administrator may only act on a role whose permission codes (before and after the change) they all hold and whose data scope is no wider than their own; otherwise 403 "outside your authority", nothing changes.';

const pageRoute = guarded(
  'sys:role:page',
  createRoute({
    method: 'post',
    path: `${base}/page`,
    tags,
    summary: 'Page of roles (filters: name, code, status)',
    request: { body: jsonBody(RolePageRequest) },
    responses: okResponse('A page of roles', RolePage),
  }),
);

const listRoute = guarded(
  'sys:role:list',
  createRoute({
    method: 'get',
    path: `${base}/list`,
    tags,
    summary: 'All enabled roles, ordered by sort, for pickers',
    responses: okResponse('Enabled roles', z.array(RoleSchema)),
  }),
);

const detailRoute = guarded(
  'sys:role:detail',
  createRoute({
    method: 'get',
    path: `${base}/detail`,
    tags,
    summary: 'One role',
    request: { query: idQuerySchema },
    responses: { ...okResponse('The role', RoleSchema), ...notFound },
  }),
);

const addRoute = guarded(
  'sys:role:add',
  createRoute({
    method: 'post',
    path: `${base}/add`,
    tags,
    summary: 'Add a role (code unique case-insensitively, else 409; dataScope defaults to self; dataScope/scopeOrgIds also need sys:role:grantDataScope)',
    description: CONTAINED,
    request: { body: jsonBody(AddRoleRequest) },
    responses: { ...okResponse('The new role', RoleSchema), 409: errorResponse('The code is taken') },
  }),
  { oplog: true },
);

const editRoute = guarded(
  'sys:role:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: "Edit a role (partial; `version` must match, else 409; the superAdmin role's code is fixed; status also needs sys:role:changeStatus, dataScope/scopeOrgIds sys:role:grantDataScope)",
    description: CONTAINED,
    request: { body: jsonBody(EditRoleRequest) },
    responses: { ...okResponse('The updated role', RoleSchema), ...notFound, 409: errorResponse('Stale version or code taken') },
  }),
  { oplog: true },
);

const deleteRoute = guarded(
  'sys:role:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary:
      'Delete roles with their menu grants. Refused with 400 while any user holds one of them (no cascade: revoke it with sysUser/grantRole first); the built-in superAdmin role cannot be deleted',
    description: CONTAINED,
    request: { body: jsonBody(IdsRequest) },
    responses: okResponse('Deleted (unknown ids are ignored)', z.null()),
  }),
  { oplog: true },
);

const changeStatusRoute = guarded(
  'sys:role:changeStatus',
  createRoute({
    method: 'post',
    path: `${base}/changeStatus`,
    tags,
    summary: "Enable or disable a role; a disabled role grants nothing from its holders' next request (the superAdmin role cannot be disabled while it is the last super admin's)",
    description: CONTAINED,
    request: { body: jsonBody(ChangeStatusRequest) },
    responses: { ...okResponse('Changed', z.null()), ...notFound },
  }),
  { oplog: true },
);

const grantMenuRoute = guarded(
  'sys:role:grantMenu',
  createRoute({
    method: 'post',
    path: `${base}/grantMenu`,
    tags,
    summary: "Replace a role's menus atomically (an empty list revokes all; unknown menu ids → 400, nothing changes; non-super-admins only menus they hold)",
    description:
      `A caller who is not a super administrator may only add or remove menus they hold themselves (granted to one of their enabled roles); any other menu → 403 naming up to 10 of them, nothing changes. Super administrators are unrestricted. ${CONTAINED}`,
    request: { body: jsonBody(GrantMenuRequest) },
    responses: { ...okResponse('Granted', z.null()), ...notFound },
  }),
  { oplog: true },
);

const grantDataScopeRoute = guarded(
  'sys:role:grantDataScope',
  createRoute({
    method: 'post',
    path: `${base}/grantDataScope`,
    tags,
    summary: "Set a role's data scope (all | orgAndBelow | org | custom + scopeOrgIds | self); never wider than the caller's own (403)",
    description: `scopeOrgIds only with \`custom\` (400 otherwise; unknown ids 400). ${CONTAINED}`,
    request: { body: jsonBody(GrantDataScopeRequest) },
    responses: { ...okResponse('Granted', z.null()), ...notFound },
  }),
  { oplog: true },
);

const ownMenuRoute = guarded(
  'sys:role:ownMenu',
  createRoute({
    method: 'get',
    path: `${base}/ownMenu`,
    tags,
    summary: "The ids of a role's menus",
    request: { query: idQuerySchema },
    responses: { ...okResponse('Menu ids', z.array(z.number().int())), ...notFound },
  }),
);

const exportRolesRoute = exportRoute('sys:role:export', base, tags, 'roles', exportRequestSchema('RoleExportRequest', RolePageParams));

/** The roles export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportRoles(c: Context, params: Parameters<typeof roles.roleFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'roles',
    rows: roles.roleFilter(params),
    select: (q) => q.selectAll('roles'),
    keys: ['roles.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Name', value: (r) => r.name },
      { header: 'Code', value: (r) => r.code },
      { header: 'Sort', value: (r) => r.sort },
      { header: 'Status', value: (r) => r.status, dict: 'sys_normal_disable' },
      { header: 'Data scope', value: (r) => r.data_scope, dict: 'sys_data_scope' },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const roleRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await roles.pageRoles(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(listRoute, async (c) => ok(c, await roles.listRoles(c.get('run'))))
  .openapi(detailRoute, async (c) => ok(c, await roles.roleDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await roles.addRole(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await roles.editRole(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await roles.deleteRoles(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(changeStatusRoute, async (c) => {
    await roles.changeRoleStatus(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(grantMenuRoute, async (c) => {
    await roles.grantMenus(c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(grantDataScopeRoute, async (c) => {
    await roles.grantDataScope(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(ownMenuRoute, async (c) => ok(c, await roles.ownMenus(c.get('run'), c.req.valid('query').id)))
  .openapi(exportRolesRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportRoles(c, params, format)) as never;
  });
