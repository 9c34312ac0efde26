import { sql, type CompiledQuery, type QueryResult } from 'kysely';
import type { Deps } from '../deps.ts';
import { AppError } from '../core/errors.ts';
import { GUARD_RULES, failedGuard, guardStatement, isForeignKeyViolation, isUniqueViolation, type GuardRule } from './guards.ts';

/** Fails the batch unless the row still has the version the client read (optimistic locking). */
export function versionGuard(deps: Deps, table: 'users' | 'roles' | 'orgs', id: number, version: number): CompiledQuery {
  return guardStatement(
    deps.db,
    'stale_version',
    sql`NOT EXISTS (SELECT 1 FROM ${sql.table(table)} WHERE id = ${id} AND version = ${version})`,
  );
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
  /** Per-call messages of other rules (e.g. which record was out of scope). */
  messages?: Partial<Record<GuardRule, string>>;
}

function guardMessage(rule: GuardRule, errors: WriteErrors): string {
  if (rule === 'stale_version' && errors.stale) return errors.stale;
  if (rule === 'super_admin_only' && errors.superAdminOnly) return errors.superAdminOnly;
  return errors.messages?.[rule] ?? GUARD_RULES[rule].message;
}

/** Runs a batch all-or-nothing and turns guard and constraint failures into client errors. */
export async function guardedWrite(deps: Deps, queries: CompiledQuery[], errors: WriteErrors = {}): Promise<QueryResult<unknown>[]> {
  try {
    return await deps.atomic(queries);
  } catch (err) {
    const rule = failedGuard(err);
    if (rule) throw new AppError(GUARD_RULES[rule].code, guardMessage(rule, errors));
    if (errors.unique && isUniqueViolation(err)) throw new AppError('CONFLICT', errors.unique);
    if (errors.foreignKey && isForeignKeyViolation(err)) throw await errors.foreignKey();
    throw err;
  }
}
