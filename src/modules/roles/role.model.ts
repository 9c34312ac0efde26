import { z } from '@hono/zod-openapi';
import type { Selectable } from 'kysely';
import type { RolesTable } from '../../db/schema';

export const RoleSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    code: z.string(),
    sort: z.number().int(),
    status: z.enum(['enabled', 'disabled']),
    remark: z.string().nullable(),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Role');

export type Role = z.infer<typeof RoleSchema>;

export const ROLE_COLUMNS = ['id', 'name', 'code', 'sort', 'status', 'remark', 'version', 'created_at', 'updated_at'] as const;

export function toRole(r: Omit<Selectable<RolesTable>, 'data_scope'>): Role {
  return {
    id: r.id,
    name: r.name,
    code: r.code,
    sort: r.sort,
    status: r.status,
    remark: r.remark,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
