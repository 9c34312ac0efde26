import { z } from '@hono/zod-openapi';
import { idSchema, idsSchema } from './pagination';

/** Shared request pieces, used by more than one module. */
export const StatusSchema = z.enum(['enabled', 'disabled'], { message: "must be 'enabled' or 'disabled'" });

/** Named per module so the OpenAPI components of parallel modules never collide. */
export const idsRequest = (name: string) => z.strictObject({ ids: idsSchema }).openapi(name);
export const statusRequest = (name: string) => z.strictObject({ id: idSchema, status: StatusSchema }).openapi(name);
