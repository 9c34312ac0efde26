import { sql } from 'kysely';
import type { Deps } from '../../deps';
import type { AuthUser } from '../../http/context';
import { forbidden } from '../../core/errors';
import { idList } from '../users/guarded-write';

/** The menus a user holds: those granted to one of their enabled roles (a subquery). */
export const heldMenuIds = (userId: number) =>
  sql<number>`(SELECT rm.menu_id FROM role_menu rm JOIN user_role ur ON ur.role_id = rm.role_id
    JOIN roles r ON r.id = rm.role_id AND r.status = 'enabled' WHERE ur.user_id = ${userId})`;

/**
 * Rule: a caller who is not a super admin may only grant or revoke roles all of whose menus they
 * hold themselves, so sys:user:grantRole cannot hand out more than its holder has (the same rule
 * grantMenu applies to menus). `changed` are the roles added or removed. 403 names the roles.
 */
export async function assertMayGrantRoles(deps: Deps, auth: AuthUser, changed: readonly number[]) {
  if (auth.isSuperAdmin || changed.length === 0) return;
  const rows = await deps.db
    .selectFrom('role_menu')
    .select('role_id')
    .distinct()
    .where('role_id', 'in', idList(changed))
    .where('menu_id', 'not in', heldMenuIds(auth.userId))
    .orderBy('role_id')
    .execute();
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.role_id);
  const more = ids.length > 10 ? `, … (${ids.length} in all)` : '';
  throw forbidden(
    `roleIds: you can only grant or revoke roles whose menus you hold yourself; not allowed: role${ids.length === 1 ? '' : 's'} ${ids.slice(0, 10).join(', ')}${more}`,
  );
}

/** Roles added or removed when a user's set becomes `next`. */
export async function changedRoles(deps: Deps, userId: number, next: readonly number[]): Promise<number[]> {
  const current = (await deps.db.selectFrom('user_role').select('role_id').where('user_id', '=', userId).execute()).map((r) => r.role_id);
  const a = new Set(current);
  const b = new Set(next);
  return [...current.filter((id) => !b.has(id)), ...next.filter((id) => !a.has(id))];
}
