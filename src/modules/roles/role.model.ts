import { z } from '@hono/zod-openapi';
import type { Selectable } from 'kysely';
import type { RolesTable } from '../../db/schema.ts';

export const DATA_SCOPES = ['all', 'orgAndBelow', 'org', 'custom', 'self'] as const;
export const DataScopeSchema = z
  .enum(DATA_SCOPES, { message: 'must be all, orgAndBelow, org, custom or self' })
  .openapi('DataScope', { description: "Which users' rows the role's holders see; `custom` = the scopeOrgIds, each with everything below it" });

export const RoleSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    code: z.string(),
    sort: z.number().int(),
    status: z.enum(['enabled', 'disabled']),
    dataScope: DataScopeSchema,
    scopeOrgIds: z.array(z.number().int()).openapi({ description: 'The organisations of a `custom` scope (empty otherwise)' }),
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Role');

export type Role = z.infer<typeof RoleSchema>;

export const ROLE_COLUMNS = ['id', 'name', 'code', 'sort', 'status', 'data_scope', 'remark', 'version', 'created_at', 'updated_at'] as const;

export function toRole(r: Selectable<RolesTable>, scopeOrgIds: number[] = []): Role {
  return {
    id: r.id,
    name: r.name,
    code: r.code,
    sort: r.sort,
    status: r.status,
    dataScope: r.data_scope,
    scopeOrgIds,
    remark: r.remark,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
