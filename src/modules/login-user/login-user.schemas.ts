import { z } from '@hono/zod-openapi';
import { UserSchema, selfProfileFields } from '../users/user.model.ts';

export const RouterMenuSchema = z
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

export const LoginUserInformation = z
  .object({
    user: UserSchema,
    roles: z.array(z.string()).openapi({ description: 'Codes of the enabled roles' }),
    permissions: z.array(z.string()).openapi({ description: 'Permission codes; ["*"] for a super admin' }),
    menus: z.array(RouterMenuSchema),
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
