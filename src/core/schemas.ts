import { z } from '@hono/zod-openapi';
import { idSchema, idsSchema } from './pagination.ts';

/** Shared request pieces, used by more than one module. */
export const StatusSchema = z.enum(['enabled', 'disabled'], { message: "must be 'enabled' or 'disabled'" });

/** Named per module so the OpenAPI components of parallel modules never collide. */
export const idsRequest = (name: string) => z.strictObject({ ids: idsSchema }).openapi(name);
/**
 * The ids of a grant or scope list (roleIds, menuIds): at most 1000 per the contract, so a role can
 * hold every menu of a large SPA; duplicates folded; an empty list revokes all. Services bind such a
 * list as ONE JSON parameter (idList / json_each), never one parameter per id (D1 allows 100).
 */
export const grantIdsSchema = z
  .array(idSchema, { message: 'must be an array of ids' })
  .max(1000, 'must contain at most 1000 ids')
  .transform((ids) => [...new Set(ids)]);

export const statusRequest = (name: string) => z.strictObject({ id: idSchema, status: StatusSchema }).openapi(name);

/** How many rows a delete or clear removed. */
export const DeletedCount = z.object({ deleted: z.number().int() }).openapi('DeletedCount');
