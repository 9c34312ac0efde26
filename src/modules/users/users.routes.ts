import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { UserSchema } from './user.model.ts';
import {
  AddUserRequest,
  ChangeStatusRequest,
  EditUserRequest,
  GrantRoleRequest,
  IdsRequest,
  ResetPasswordRequest,
  ResetMfaRequest,
  UserPage,
  UserPageRequest,
} from './users.schemas.ts';
import * as users from './users.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

const tags = ['Users'];
const base = '/app/sysUser';
const notFound = { 404: errorResponse('No such user') };
const conflict = (what: string) => ({ 409: errorResponse(what) });
/** The super-admin rule, stated on every write it applies to. */
const SUPER_RULE =
  'Only a super administrator may grant or revoke the superAdmin role or act on a user who holds it; anyone else gets 403 ("Only a super administrator can …").';

const pageRoute = guarded(
  'sys:user:page',
  createRoute({
    method: 'post',
    path: `${base}/page`,
    tags,
    summary: 'Page of users (filters: loginName, nickName, phone, status, roleId, createdFrom, createdTo)',
    request: { body: jsonBody(UserPageRequest) },
    responses: okResponse('A page of users', UserPage),
  }),
);

const detailRoute = guarded(
  'sys:user:detail',
  createRoute({
    method: 'get',
    path: `${base}/detail`,
    tags,
    summary: 'One user',
    request: { query: idQuerySchema },
    responses: { ...okResponse('The user', UserSchema), ...notFound },
  }),
);

const addRoute = guarded(
  'sys:user:add',
  createRoute({
    method: 'post',
    path: `${base}/add`,
    tags,
    summary: 'Add a user (with optional roleIds, in one atomic write; login names are unique case-insensitively; superAdmin role: super admins only)',
    description: `${SUPER_RULE} Adding a user with the superAdmin role in \`roleIds\` is therefore 403 for others.`,
    request: { body: jsonBody(AddUserRequest) },
    responses: { ...okResponse('The new user', UserSchema), ...conflict('The login name is taken') },
  }),
  { oplog: true },
);

const editRoute = guarded(
  'sys:user:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit a user (partial; `version` must match, else 409; roleIds also needs sys:user:grantRole, status sys:user:changeStatus)',
    description: `Sending \`roleIds\` also requires \`sys:user:grantRole\`, sending \`status\` also \`sys:user:changeStatus\` (403 otherwise; super admins pass). ${SUPER_RULE}`,
    request: { body: jsonBody(EditUserRequest) },
    responses: { ...okResponse('The updated user', UserSchema), ...notFound, ...conflict('Stale version or login name taken') },
  }),
  { oplog: true },
);

const deleteRoute = guarded(
  'sys:user:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: "Delete users with their role grants and sessions (never the caller's own account or the last super admin; a super admin only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(IdsRequest) },
    responses: okResponse('Deleted (unknown ids are ignored)', z.null()),
  }),
  { oplog: true },
);

const changeStatusRoute = guarded(
  'sys:user:changeStatus',
  createRoute({
    method: 'post',
    path: `${base}/changeStatus`,
    tags,
    summary: "Enable or disable a user; disabling revokes the user's sessions (never oneself or the last super admin; a super admin only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(ChangeStatusRequest) },
    responses: { ...okResponse('Changed', z.null()), ...notFound },
  }),
  { oplog: true },
);

const resetPasswordRoute = guarded(
  'sys:user:resetPassword',
  createRoute({
    method: 'post',
    path: `${base}/resetPassword`,
    tags,
    summary: "Set a user's password; revokes all of that user's sessions (a super admin's only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(ResetPasswordRequest) },
    responses: { ...okResponse('Reset', z.null()), ...notFound },
  }),
  { oplog: true },
);

const resetMfaRoute = guarded(
  'sys:user:resetMfa',
  createRoute({
    method: 'post',
    path: `${base}/resetMfa`,
    tags,
    summary: "Remove a user's second factors (TOTP, passkeys, recovery codes); revokes all of that user's sessions",
    description: `${SUPER_RULE} Not for one's own account (400: use the own-account mfa routes).`,
    request: { body: jsonBody(ResetMfaRequest) },
    responses: { ...okResponse('Reset', z.null()), ...notFound },
  }),
  { oplog: true },
);

const grantRoleRoute = guarded(
  'sys:user:grantRole',
  createRoute({
    method: 'post',
    path: `${base}/grantRole`,
    tags,
    summary: "Replace a user's roles (an empty list revokes all; unknown role ids → 400; never strips the last super admin; the superAdmin role only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(GrantRoleRequest) },
    responses: { ...okResponse('Granted', z.null()), ...notFound },
  }),
  { oplog: true },
);

const ownRoleRoute = guarded(
  'sys:user:ownRole',
  createRoute({
    method: 'get',
    path: `${base}/ownRole`,
    tags,
    summary: "The ids of a user's roles",
    request: { query: idQuerySchema },
    responses: { ...okResponse('Role ids', z.array(z.number().int())), ...notFound },
  }),
);

export const userRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await users.pageUsers(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await users.userDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await users.addUser(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await users.editUser(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await users.deleteUsers(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(changeStatusRoute, async (c) => {
    await users.changeUserStatus(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(resetPasswordRoute, async (c) => {
    await users.resetPassword(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(resetMfaRoute, async (c) => {
    await users.resetMfa(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(grantRoleRoute, async (c) => {
    await users.grantRoles(c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(ownRoleRoute, async (c) => ok(c, await users.ownRoles(c.get('run'), c.req.valid('query').id)));
