import { z } from '@hono/zod-openapi';
import { dateRangeParams, idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { PASSWORD_MAX_LENGTH } from '../../core/password-policy.ts';
import { StatusSchema, grantIdsSchema, idsRequest, statusRequest } from '../../core/schemas.ts';
import { LoginNameSchema, UserSchema, selfProfileFields } from './user.model.ts';

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
const nullableText = (max: number) => text(max).nullable().optional();

/** Role ids of a grant (grantIdsSchema: up to 1000). */
export const roleIdsSchema = grantIdsSchema;

/** The editable profile fields, shared by add and edit. */
const profileFields = {
  ...selfProfileFields,
  remark: nullableText(255),
  orgId: idSchema.nullable().optional().openapi({ description: "The user's organisation (null = none); must be in the caller's data scope" }),
  status: StatusSchema.optional(),
  roleIds: roleIdsSchema.optional(),
  postIds: grantIdsSchema.optional().openapi({ description: 'The posts (job positions) the user holds; replaces the set when given' }),
};

export const AddUserRequest = z
  .strictObject({
    loginName: LoginNameSchema,
    password: z
      .string()
      .min(1, 'is required')
      .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)
      .optional()
      .openapi({ description: 'Omitted: the system parameter sys.user.initPassword (400 while it is empty). The password policy applies either way.' }),
    ...profileFields,
  })
  .openapi('AddUserRequest', {
    description: 'A new user; nickName defaults to the login name, status to enabled. roleIds and postIds are granted in the same atomic write.',
  });

export const EditUserRequest = z
  .strictObject({
    id: idSchema,
    version: z.number().int('must be an integer').min(1, 'must be at least 1'),
    loginName: LoginNameSchema.optional(),
    ...profileFields,
  })
  .openapi('EditUserRequest', {
    description: 'Partial update: omitted fields stay as they are. `version` must be the one read; a stale one is refused with 409. roleIds, when given, replace the set.',
  });

export const IdsRequest = idsRequest('UserIdsRequest');
export const ChangeStatusRequest = statusRequest('UserStatusRequest');

export const ResetPasswordRequest = z
  .strictObject({
    id: idSchema,
    newPassword: z.string().min(1, 'is required').max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`),
  })
  .openapi('ResetPasswordRequest');

export const ResetMfaRequest = z.strictObject({ id: idSchema }).openapi('ResetMfaRequest');

export const GrantRoleRequest = z.strictObject({ userId: idSchema, roleIds: roleIdsSchema }).openapi('GrantRoleRequest');

export const UserPageParams = z
  .strictObject({
    loginName: likeText().optional().openapi({ description: 'Start of the login name, case-insensitive (`adm` finds admin)' }),
    nickName: likeText().optional().openapi({ description: 'Part of the nick name' }),
    phone: likeText().optional().openapi({ description: 'Start of the phone number' }),
    status: StatusSchema.optional(),
    roleId: idSchema.optional(),
    postId: idSchema.optional().openapi({ description: 'Users holding this post' }),
    orgId: idSchema.optional().openapi({ description: 'That organisation and everything below it' }),
    ...dateRangeParams,
  })
  .openapi('UserPageParams');

export const USER_SORT_FIELDS = ['id', 'loginName', 'nickName', 'createdAt', 'updatedAt', 'lastLoginAt'] as const;

export const UserPageRequest = pageRequestSchema('UserPageRequest', UserPageParams, USER_SORT_FIELDS);
export const UserPage = pageResponseSchema('UserPage', UserSchema);

export type AddUserInput = z.infer<typeof AddUserRequest>;
export type EditUserInput = z.infer<typeof EditUserRequest>;
export type UserPageInput = z.infer<typeof UserPageRequest>;
