import { z } from '@hono/zod-openapi';
import type { UserRow } from '../../db/schema.ts';

/** The public face of a user: never the password hash. */
export const UserSchema = z
  .object({
    id: z.number().int(),
    loginName: z.string(),
    nickName: z.string(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    avatar: z.string().nullable(),
    status: z.enum(['enabled', 'disabled']),
    remark: z.string().nullable(),
    lastLoginAt: z.string().nullable(),
    lastLoginIp: z.string().nullable(),
    orgId: z.number().int().nullable().openapi({ description: "The user's organisation (null = none)" }),
    orgName: z.string().nullable().openapi({ description: "The organisation's name (null = none)" }),
    postIds: z.array(z.number().int()).openapi({ description: 'The posts (job positions) the user holds' }),
    mfaEnabled: z.boolean().openapi({ description: 'The user has an active second factor (TOTP or a passkey); never the factor itself' }),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('User');

export type User = z.infer<typeof UserSchema>;

/** Columns that make up a public user, for selects that must never touch password_hash. */
export const USER_COLUMNS = [
  'id', 'login_name', 'nick_name', 'email', 'phone', 'avatar', 'status', 'remark',
  'last_login_at', 'last_login_ip', 'org_id', 'mfa_enabled', 'version', 'created_at', 'updated_at',
] as const;

/** The user's posts as a JSON array (the user_post key orders them by id): one index range per user. */
export const USER_POST_IDS_SQL = '(SELECT json_group_array(up.post_id) FROM user_post up WHERE up.user_id = users.id)';

/** The public columns qualified by `users.`, plus the organisation's name (LEFT JOIN orgs) and the posts. */
export const USER_SELECT = `${USER_COLUMNS.map((c) => `users.${c}`).join(', ')}, orgs.name AS org_name, ${USER_POST_IDS_SQL} AS post_ids`;
export const USER_FROM = 'users LEFT JOIN orgs ON orgs.id = users.org_id';

export type PublicUserRow = Omit<UserRow, 'password_hash'> & { org_name?: string | null; post_ids?: string | null };

export function toUser(r: PublicUserRow): User {
  return {
    id: r.id,
    loginName: r.login_name,
    nickName: r.nick_name,
    email: r.email,
    phone: r.phone,
    avatar: r.avatar,
    status: r.status,
    remark: r.remark,
    lastLoginAt: r.last_login_at,
    lastLoginIp: r.last_login_ip,
    orgId: r.org_id,
    orgName: r.org_name ?? null,
    postIds: r.post_ids ? (JSON.parse(r.post_ids) as number[]) : [],
    mfaEnabled: r.mfa_enabled === 1,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Login names: ASCII so that case-insensitive uniqueness (COLLATE NOCASE) is exact. */
export const LoginNameSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_.@-]{2,64}$/, 'must be 2-64 characters: letters, digits, _ . @ -');

const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);

/** The profile fields a user may edit about themselves; sysUser add/edit take them too. */
export const selfProfileFields = {
  nickName: text(64).min(1, 'must not be empty').optional(),
  email: text(128).pipe(z.email('must be an email address')).openapi({ format: 'email' }).nullable().optional(),
  phone: text(32).regex(/^[0-9+\-() ]*$/, 'may contain digits, spaces and + - ( ) only').nullable().optional(),
  avatar: text(512)
    .refine(isAvatarUrl, 'must be an http(s) URL or a path on this service (/…)')
    .openapi({ description: 'An http(s) URL or a path on this service, e.g. an image preview link; "" for none' })
    .nullable()
    .optional(),
};

/**
 * Avatars end up in an `<img src>` (and, in careless SPAs, an `<a href>`): only http(s) URLs and
 * paths on this service, never `javascript:`, `data:` (SVG can script) or a protocol-relative
 * `//host` that would load from anywhere.
 */
function isAvatarUrl(v: string): boolean {
  if (v === '') return true;
  if (v.startsWith('/')) return !v.startsWith('//') && !/[\s\\]/.test(v);
  if (!/^https?:\/\//i.test(v)) return false;
  try {
    const url = new URL(v);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}
