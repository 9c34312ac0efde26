import { z } from '@hono/zod-openapi';
import { UserSchema, selfProfileFields } from '../users/index.ts';

export const RouterMenuSchema = z
  .object({
    id: z.number().int(),
    parentId: z.number().int(),
    title: z.string(),
    type: z.enum(['directory', 'menu']),
    path: z.string().nullable(),
    component: z.string().nullable(),
    icon: z.string().nullable(),
    sort: z.number().int().openapi({ description: 'Order among siblings (route meta `order`)' }),
    hidden: z.boolean().openapi({ description: 'Routed but not shown in the menu (route meta `hideInMenu`/`hidden`)' }),
    name: z.string().openapi({ description: 'Stable, unique route name (vue-router `name`): the menu\'s own, or `Menu<id>`', example: 'Users' }),
    keepAlive: z.boolean().openapi({ description: 'Route meta: keep the page alive (cached) when navigating away' }),
    get children(): z.ZodArray<typeof RouterMenuSchema> {
      return z.array(RouterMenuSchema);
    },
  })
  .openapi('RouterMenu');

export const LoginUserInformation = z
  .object({
    user: UserSchema,
    roles: z.array(z.string()).openapi({ description: 'Codes of the enabled roles' }),
    permissions: z.array(z.string()).openapi({ description: 'Permission codes; ["*"] for a super admin' }),
    menus: z.array(RouterMenuSchema),
    org: z.object({ id: z.number().int(), name: z.string() }).nullable().openapi({ description: "The caller's organisation, or null" }),
    dataScope: z
      .object({
        all: z.boolean().openapi({ description: 'Sees everything (a role with scope `all`, or a super admin)' }),
        orgIds: z.array(z.number().int()).openapi({ description: 'The organisations covered (empty when `all`)' }),
        self: z.boolean().openapi({ description: "Also the caller's own rows" }),
      })
      .openapi('EffectiveDataScope', { description: "The caller's effective data scope: the union over their enabled roles" }),
  })
  .openapi('LoginUserInformation');

export const UpdateInfoRequest = z.strictObject(selfProfileFields).openapi('UpdateInfoRequest');

export const UpdatePasswordRequest = z
  .strictObject({
    oldPassword: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
    newPassword: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  })
  .openapi('UpdatePasswordRequest');

export type ProfileInput = z.infer<typeof UpdateInfoRequest>;
