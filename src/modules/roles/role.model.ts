import { z } from '@hono/zod-openapi';
import { sql, type Selectable } from 'kysely';
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
    mfaRequired: z.boolean().openapi({ description: 'Holders without a second factor may only enrol one (set with sys:role:requireMfa)' }),
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Role');

export type Role = z.infer<typeof RoleSchema>;

export const ROLE_COLUMNS = ['id', 'name', 'code', 'sort', 'status', 'data_scope', 'mfa_required', 'remark', 'version', 'created_at', 'updated_at'] as const;

/**
 * A role's custom-scope organisations as a JSON list, read as a column of the role's own row (a
 * second query would be a second round trip on D1).
 */
const SCOPE_ORG_IDS = sql<string>`(SELECT json_group_array(o.org_id) FROM (SELECT rso.org_id FROM role_scope_org rso WHERE rso.role_id = roles.id ORDER BY rso.org_id) o)`.as('scope_org_ids');

/** The columns a role record is read with (FROM roles). */
export const ROLE_SELECT = [...ROLE_COLUMNS, SCOPE_ORG_IDS] as const;

/** A row read with ROLE_SELECT. */
export type RoleRow = Pick<Selectable<RolesTable>, (typeof ROLE_COLUMNS)[number]> & { scope_org_ids: string | null };

/** The organisation ids of a RoleRow's scope_org_ids. */
export const scopeOrgIdsOf = (r: RoleRow): number[] => JSON.parse(r.scope_org_ids ?? '[]') as number[];

export function toRole(r: Pick<Selectable<RolesTable>, (typeof ROLE_COLUMNS)[number]>, scopeOrgIds: number[] = []): Role {
  return {
    id: r.id,
    name: r.name,
    code: r.code,
    sort: r.sort,
    status: r.status,
    dataScope: r.data_scope,
    scopeOrgIds,
    mfaRequired: r.mfa_required === 1,
    remark: r.remark,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
