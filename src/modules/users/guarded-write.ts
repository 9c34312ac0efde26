import { sql, type CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import type { Deps } from '../../deps';
import type { AuthUser } from '../../http/context';
import { AppError, badRequest, conflict, forbidden } from '../../core/errors';
import { failedGuard, guardStatement, isForeignKeyViolation, isUniqueViolation } from '../../core/guards';
import { SUPER_ADMIN_ROLE } from '../../core/permissions';

export const LAST_SUPER_ADMIN_MSG =
  'Refused: this would leave no enabled user holding the enabled superAdmin role (the last super admin cannot be deleted, disabled or lose the role)';

/**
 * The last statement of every batch that could remove a super admin (user delete, disable,
 * role grant, role disable/delete): fails the batch when, after its writes, no enabled user holds
 * the enabled superAdmin role. Running inside the batch makes it race-free: of two concurrent
 * requests that each remove one of the last two super admins, the second sees the first's write.
 */
export function lastSuperAdminGuard(deps: Deps): CompiledQuery {
  return guardStatement(
    deps.db,
    'last_super_admin',
    sql`NOT EXISTS (SELECT 1 FROM users u JOIN user_role ur ON ur.user_id = u.id JOIN roles r ON r.id = ur.role_id
      WHERE u.status = 'enabled' AND r.status = 'enabled' AND r.code = ${SUPER_ADMIN_ROLE})`,
  );
}

/** Fails the batch unless the row still has the version the client read (optimistic locking). */
export function versionGuard(deps: Deps, table: 'users' | 'roles', id: number, version: number): CompiledQuery {
  return guardStatement(
    deps.db,
    'stale_version',
    sql`NOT EXISTS (SELECT 1 FROM ${sql.table(table)} WHERE id = ${id} AND version = ${version})`,
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
export async function assertMayTouchSuperAdmin(deps: Deps, auth: AuthUser, touch: SuperAdminTouch, message: string): Promise<void> {
  if (auth.isSuperAdmin) return;
  const { rows } = await sql<{ one: number }>`SELECT 1 AS one WHERE ${touchesSuperAdmin(touch)}`.execute(deps.db);
  if (rows.length > 0) throw forbidden(message);
}

export function superAdminOnly(deps: Deps, auth: AuthUser, touch: SuperAdminTouch): CompiledQuery[] {
  return auth.isSuperAdmin ? [] : [guardStatement(deps.db, 'super_admin_only', touchesSuperAdmin(touch))];
}

export interface WriteErrors {
  /** The super_admin_only guard failed: the 403 message ("Only a super administrator can …"). */
  superAdminOnly?: string;
  /** A UNIQUE violation: which value is taken. */
  unique?: string;
  /** A FOREIGN KEY violation: the error to answer (may look up which ids were unknown). */
  foreignKey?: () => Promise<AppError> | AppError;
  /** The version guard failed. */
  stale?: string;
}

/** Runs a batch all-or-nothing and turns guard and constraint failures into client errors. */
export async function guardedWrite(deps: Deps, queries: CompiledQuery[], errors: WriteErrors = {}): Promise<QueryResult<unknown>[]> {
  try {
    return await deps.atomic(queries);
  } catch (err) {
    const rule = failedGuard(err);
    if (rule === 'last_super_admin') throw badRequest(LAST_SUPER_ADMIN_MSG);
    if (rule === 'stale_version') throw conflict(errors.stale ?? 'version: the record was changed by someone else; reload it and try again');
    if (rule === 'super_admin_only') throw forbidden(errors.superAdminOnly ?? 'Only a super administrator can change a super administrator or grant the superAdmin role');
    if (rule === 'role_in_use') throw badRequest('ids: a role that is still granted to users cannot be deleted; revoke it first');
    if (errors.unique && isUniqueViolation(err)) throw conflict(errors.unique);
    if (errors.foreignKey && isForeignKeyViolation(err)) throw await errors.foreignKey();
    throw err;
  }
}

/**
 * A list of validated ids as ONE bound parameter: `col IN ${idList(ids)}` or
 * `SELECT value FROM json_each(...)`. D1 caps a statement at 100 bound parameters, and a batch
 * action may carry 100 ids plus other values.
 */
export function idList(ids: readonly number[]): RawBuilder<number> {
  return sql<number>`(SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** "unknown role id 7" / "unknown menu ids 7, 8, … (12 in all)" for a grant that named missing rows. */
export function unknownIdsMessage(field: string, kind: string, missing: readonly number[]): string {
  if (missing.length === 0) return `${field}: a ${kind} was removed meanwhile; reload and try again`;
  const shown = missing.slice(0, 10).join(', ');
  const more = missing.length > 10 ? `, … (${missing.length} in all)` : '';
  return `${field}: unknown ${kind} id${missing.length === 1 ? '' : 's'} ${shown}${more}`;
}

/** The ids among `ids` that have no row in `table`, for "unknown id" messages. */
export async function missingIds(deps: Deps, table: 'roles' | 'menus' | 'users', ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await deps.db.selectFrom(table).select('id').where('id', 'in', idList(ids)).execute();
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}
