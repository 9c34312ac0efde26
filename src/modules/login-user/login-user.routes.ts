import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard';
import { createRouter, jsonBody } from '../../http/router';
import { UserSchema, selfProfileFields } from '../users/user.model';
import { loginUserInformation, updateInfo, updatePassword } from './login-user.service';
import { ok, okResponse } from '../../http/respond';

const RouterMenuSchema = z
  .object({
    id: z.number().int(),
    parentId: z.number().int(),
    title: z.string(),
    type: z.enum(['directory', 'menu']),
    path: z.string().nullable(),
    component: z.string().nullable(),
    icon: z.string().nullable(),
    sort: z.number().int(),
    hidden: z.boolean(),
    get children(): z.ZodArray<typeof RouterMenuSchema> {
      return z.array(RouterMenuSchema);
    },
  })
  .openapi('RouterMenu');

const LoginUserInformation = z
  .object({
    user: UserSchema,
    roles: z.array(z.string()).openapi({ description: 'Codes of the enabled roles' }),
    permissions: z.array(z.string()).openapi({ description: 'Permission codes; ["*"] for a super admin' }),
    menus: z.array(RouterMenuSchema),
  })
  .openapi('LoginUserInformation');

const UpdateInfoRequest = z.strictObject(selfProfileFields).openapi('UpdateInfoRequest');

const UpdatePasswordRequest = z
  .strictObject({
    oldPassword: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
    newPassword: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  })
  .openapi('UpdatePasswordRequest');

const tags = ['Logged-in user'];

const infoRoute = guarded(
  null,
  createRoute({
    method: 'get',
    path: '/app/sysLoginUser/getLoginUserInformation',
    tags,
    summary: 'The caller: user, role codes, permission codes and SPA menu tree',
    responses: okResponse('Who is logged in', LoginUserInformation),
  }),
);

const updateInfoRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: '/app/sysLoginUser/updateInfo',
    tags,
    summary: "Update the caller's own profile",
    request: { body: jsonBody(UpdateInfoRequest) },
    responses: okResponse('The updated user', UserSchema),
  }),
  { oplog: true },
);

const updatePasswordRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: '/app/sysLoginUser/updatePassword',
    tags,
    summary: "Change the caller's own password; ends the caller's other sessions",
    request: { body: jsonBody(UpdatePasswordRequest) },
    responses: okResponse('Changed', z.null()),
  }),
  { oplog: true },
);

export const loginUserRoutes = createRouter()
  .openapi(infoRoute, async (c) => ok(c, await loginUserInformation(c.var.deps, c.var.auth)))
  .openapi(updateInfoRoute, async (c) =>
    ok(c, await updateInfo(c.var.deps, c.var.auth, c.req.valid('json'))),
  )
  .openapi(updatePasswordRoute, async (c) => {
    await updatePassword(c.var.deps, c.var.auth, c.req.valid('json'));
    return ok(c, null);
  });
