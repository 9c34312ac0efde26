import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { forbidden } from '../core/errors.ts';
import { SUPER_ADMIN_ROLE } from '../core/permissions.ts';
import { qb } from '../db/compile.ts';
import { guardStatement } from '../db/guards.ts';
import { idList } from '../db/id-list.ts';
import type { Runner } from '../db/runner.ts';

/**
 * The last statement of every batch that could remove a super admin (user delete, disable,
 * role grant, role disable/delete): fails the batch when, after its writes, no enabled user holds
 * the enabled superAdmin role. Running inside the batch makes it race-free: of two concurrent
 * requests that each remove one of the last two super admins, the second sees the first's write.
 */
export function lastSuperAdminGuard(): CompiledQuery {
  return guardStatement(
    'last_super_admin',
    sql`NOT EXISTS (SELECT 1 FROM users u JOIN user_role ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
      WHERE u.status = 'enabled' AND r.status = 'enabled' AND r.code = ${SUPER_ADMIN_ROLE})`,
  );
}

/** What a write would touch that only a super admin may: users that hold the role, or a grant of it. */
export interface SuperAdminTouch {
  /** Users written to (edited, deleted, disabled, password reset, roles replaced). */
  userIds?: readonly number[];
  /** Roles granted by the write. */
  roleIds?: readonly number[];
}

/**
 * True when one of `userIds` holds the superAdmin role (a grant of it, whatever the user's or the
 * role's status: a disabled holder re-enabled is a super admin again) or `roleIds` names that role.
 */
function touchesSuperAdmin(touch: SuperAdminTouch): RawBuilder<boolean> {
  const holders = touch.userIds?.length
    ? sql`EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
        WHERE ur.user_id IN ${idList(touch.userIds)} AND r.code = ${SUPER_ADMIN_ROLE})`
    : sql`0`;
  const grants = touch.roleIds?.length
    ? sql`EXISTS (SELECT 1 FROM roles r WHERE r.id IN ${idList(touch.roleIds)} AND r.code = ${SUPER_ADMIN_ROLE})`
    : sql`0`;
  return sql<boolean>`(${holders} OR ${grants})`;
}

/**
 * Rule: only a super admin may grant or revoke the superAdmin role, or add, edit, delete, enable or
 * disable, reset the password of, or change the roles of a user who holds it. For any other caller
 * an early check answers 403 at once, and `superAdminOnly` (none for a super admin) goes FIRST in
 * the batch, so it judges the state the writes start from: a grant of the role racing the request
 * cannot slip past it.
 */
export async function assertMayTouchSuperAdmin(run: Runner, auth: Caller, touch: SuperAdminTouch, message: string): Promise<void> {
  if (auth.isSuperAdmin) return;
  const rows = await run.rows(sql`SELECT 1 AS one WHERE ${touchesSuperAdmin(touch)}`.compile(qb));
  if (rows.length > 0) throw forbidden(message);
}

export function superAdminOnly(auth: Caller, touch: SuperAdminTouch): CompiledQuery[] {
  return auth.isSuperAdmin ? [] : [guardStatement('super_admin_only', touchesSuperAdmin(touch))];
}

/** superAdminOnly for users given as an SQL list or subquery (none for a super admin). */
export function superAdminOnlyAmong(auth: Caller, userIds: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [
    guardStatement(
      'super_admin_only',
      sql`EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id IN ${userIds} AND r.code = ${SUPER_ADMIN_ROLE})`,
    ),
  ];
}
