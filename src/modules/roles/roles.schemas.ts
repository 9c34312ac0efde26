import { z } from '@hono/zod-openapi';
import { idSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { StatusSchema, grantIdsSchema } from '../../core/schemas.ts';
import { DataScopeSchema, RoleSchema } from './role.model.ts';

export const ROLE_CODE_FORMAT = /^[A-Za-z][A-Za-z0-9_]{1,63}$/;

const roleFields = {
  name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  code: z.string().trim().regex(ROLE_CODE_FORMAT, 'must be 2-64 characters: a letter, then letters, digits or _'),
  sort: z.number().int('must be an integer').min(0, 'must be at least 0').max(1_000_000, 'must be at most 1000000'),
  status: StatusSchema,
  remark: z.string().trim().max(255, 'must be at most 255 characters').nullable(),
  dataScope: DataScopeSchema,
  scopeOrgIds: grantIdsSchema,
  mfaRequired: z.boolean({ message: 'must be true or false' }),
};

export const AddRoleRequest = z
  .strictObject({
    name: roleFields.name,
    code: roleFields.code,
    sort: roleFields.sort.optional(),
    status: roleFields.status.optional(),
    remark: roleFields.remark.optional(),
    dataScope: roleFields.dataScope.optional(),
    scopeOrgIds: roleFields.scopeOrgIds.optional(),
    mfaRequired: roleFields.mfaRequired.optional(),
  })
  .openapi('AddRoleRequest', {
    description:
      'A new role; code is unique (case-insensitively), sort defaults to 0, status to enabled, dataScope to self (least privilege), mfaRequired to false. dataScope/scopeOrgIds also need sys:role:grantDataScope, mfaRequired sys:role:requireMfa.',
  });

export const EditRoleRequest = z
  .strictObject({
    id: idSchema,
    version: z.number().int('must be an integer').min(1, 'must be at least 1'),
    name: roleFields.name.optional(),
    code: roleFields.code.optional(),
    sort: roleFields.sort.optional(),
    status: roleFields.status.optional(),
    remark: roleFields.remark.optional(),
    dataScope: roleFields.dataScope.optional(),
    scopeOrgIds: roleFields.scopeOrgIds.optional(),
    mfaRequired: roleFields.mfaRequired.optional(),
  })
  .openapi('EditRoleRequest', {
    description: "Partial update; `version` must be the one read (stale → 409). The superAdmin role's code cannot change.",
  });

/** Menu ids of a grant (grantIdsSchema: up to 1000). */
export const GrantMenuRequest = z
  .strictObject({
    roleId: idSchema,
    menuIds: grantIdsSchema,
  })
  .openapi('GrantMenuRequest');

export const GrantDataScopeRequest = z
  .strictObject({ roleId: idSchema, dataScope: roleFields.dataScope, scopeOrgIds: roleFields.scopeOrgIds.optional() })
  .openapi('GrantDataScopeRequest', { description: 'scopeOrgIds only with dataScope `custom` (each org with everything below it).' });

export const RolePageParams = z
  .strictObject({
    name: likeText().optional(),
    code: likeText().optional(),
    status: StatusSchema.optional(),
  })
  .openapi('RolePageParams');

export const ROLE_SORT_FIELDS = ['id', 'name', 'code', 'sort', 'createdAt', 'updatedAt'] as const;
export const RolePageRequest = pageRequestSchema('RolePageRequest', RolePageParams, ROLE_SORT_FIELDS);
export const RolePage = pageResponseSchema('RolePage', RoleSchema);

export type AddRoleInput = z.infer<typeof AddRoleRequest>;
export type EditRoleInput = z.infer<typeof EditRoleRequest>;
export type GrantDataScopeInput = z.infer<typeof GrantDataScopeRequest>;
export type RolePageInput = z.infer<typeof RolePageRequest>;
