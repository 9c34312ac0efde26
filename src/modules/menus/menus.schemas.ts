import { z } from '@hono/zod-openapi';
import { idSchema, idsSchema } from '../../core/pagination.ts';
import { PERMISSION_FORMAT } from '../../core/permissions.ts';

export const MENU_TYPES = ['directory', 'menu', 'button'] as const;
/** A route name vue-router and the admin templates accept as-is. */
export const MENU_NAME_FORMAT = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export const MenuSchema = z
  .object({
    id: z.number().int(),
    parentId: z.number().int().openapi({ description: '0 for a root item' }),
    title: z.string(),
    type: z.enum(MENU_TYPES),
    path: z.string().nullable(),
    component: z.string().nullable(),
    icon: z.string().nullable(),
    permission: z.string().nullable().openapi({ description: 'module:resource:action, e.g. sys:user:add' }),
    sort: z.number().int(),
    hidden: z.boolean(),
    name: z.string().nullable().openapi({ description: 'Stable route name for SPA routers, unique; `Menu<id>` when none was given; null for buttons without one', example: 'Users' }),
    keepAlive: z.boolean().openapi({ description: 'Route meta: keep the page alive (cached) when navigating away' }),
    status: z.enum(['enabled', 'disabled']),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Menu');

export type Menu = z.infer<typeof MenuSchema>;
export type MenuNode = Menu & { children: MenuNode[] };

export const MenuNodeSchema = MenuSchema.extend({
  get children(): z.ZodArray<typeof MenuNodeSchema> {
    return z.array(MenuNodeSchema);
  },
}).openapi('MenuNode');

/** Optional free text: trimmed, an empty string clears the field. */
const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`).nullable();

/** The fields add takes; edit takes any of them. Defaults are applied by the service, not here. */
const menuFields = {
  parentId: z
    .number({ message: 'must be a number' })
    .int('must be an integer')
    .min(0, 'must be 0 (root) or a menu id')
    .max(Number.MAX_SAFE_INTEGER, 'is too large')
    .openapi({ description: '0 for a root item; the parent must exist and must not be a button' }),
  title: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  type: z.enum(MENU_TYPES, { message: 'must be directory, menu or button' }),
  path: text(256),
  component: text(256),
  icon: text(64),
  permission: text(128)
    .refine((v) => v === null || v === '' || PERMISSION_FORMAT.test(v), 'must look like module:resource:action (e.g. sys:user:add)')
    .openapi({ description: 'module:resource:action; required for a button' }),
  sort: z.number({ message: 'must be a number' }).int('must be an integer').min(-1_000_000).max(1_000_000),
  hidden: z.boolean({ message: 'must be true or false' }),
  name: z
    .string()
    .trim()
    .regex(MENU_NAME_FORMAT, 'must start with a letter and hold only letters, digits, _ and - (at most 64)')
    .nullable()
    .openapi({ description: 'Route name, unique case-insensitively (409 if taken); null or omitted: `Menu<id>`', example: 'Reports' }),
  keepAlive: z.boolean({ message: 'must be true or false' }),
  status: z.enum(['enabled', 'disabled'], { message: 'must be enabled or disabled' }),
};

/** Every field optional but title and type; unknown fields refused (strict). */
export const MenuAddRequest = z
  .strictObject(menuFields)
  .partial()
  .required({ title: true, type: true })
  .openapi('MenuAddRequest');

/** `id`, the `version` read, and any of the add fields; omitted fields stay as they are. */
export const MenuEditRequest = z
  .strictObject(menuFields)
  .partial()
  .extend({
    id: idSchema,
    version: z.number({ message: 'must be a number' }).int('must be an integer').min(1, 'must be at least 1'),
  })
  .openapi('MenuEditRequest');

export const MenuDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('MenuDeleteRequest');

export type MenuAddInput = z.infer<typeof MenuAddRequest>;
export type MenuEditInput = z.infer<typeof MenuEditRequest>;
