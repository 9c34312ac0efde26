import { createRoute, z } from '@hono/zod-openapi';
import { guarded } from '../../http/guard.ts';
import { createRouter, jsonBody } from '../../http/router.ts';
import { UserSchema } from '../users/index.ts';
import { LoginUserInformation, UpdateInfoRequest, UpdatePasswordRequest } from './login-user.schemas.ts';
import { loginUserInformation, updateInfo, updatePassword } from './login-user.service.ts';
import { ok, okResponse } from '../../http/respond.ts';

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
  { mfaEnrolment: true },
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
  // The row, the lock state and the failure counter in one batch with the auth statement.
  { oplog: true },
);

export const loginUserRoutes = createRouter()
  .openapi(infoRoute, async (c) => ok(c, await loginUserInformation(c.get('deps'), c.get('run'))))
  .openapi(updateInfoRoute, async (c) =>
    ok(c, await updateInfo(c.get('deps'), c.get('run'), c.req.valid('json'))),
  )
  .openapi(updatePasswordRoute, async (c) => {
    await updatePassword(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  });
