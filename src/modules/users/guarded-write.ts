import { sql, type CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import type { Deps } from '../../deps';
import { AppError, badRequest, conflict } from '../../core/errors';
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

export interface WriteErrors {
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
