import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import { qb } from './compile.ts';
import type { ErrorCode } from '../core/errors.ts';

/**
 * Rules checked INSIDE an atomic write (see migrations/0002_guard_failures.sql; the table is
 * recreated with every rule by 0004_super_admin_guard.sql): a guard statement placed in the same
 * deps.atomic batch fails the whole batch when its condition holds, so two concurrent requests
 * cannot each pass a check made before either wrote. Each rule carries the answer the client
 * gets when it fails (a write plan's WriteErrors may override the message).
 */
/** The 403 of a session restricted to enrolling (contract: "second factor required"). */
export const MFA_REQUIRED_MSG =
  'Second factor required: your role requires one; set it up under /app/sysLoginUser/mfa/ (everything else is refused until then)';

export const GUARD_RULES = {
  last_super_admin: {
    code: 'BAD_REQUEST',
    message:
      'Refused: this would leave no enabled user holding the enabled superAdmin role (the last super admin cannot be deleted, disabled or lose the role)',
  },
  stale_version: { code: 'CONFLICT', message: 'version: the record was changed by someone else; reload it and try again' },
  role_in_use: { code: 'BAD_REQUEST', message: 'ids: a role that is still granted to users cannot be deleted; revoke it first' },
  super_admin_only: {
    code: 'FORBIDDEN',
    message: 'Only a super administrator can change a super administrator or grant the superAdmin role',
  },
  // Access control (migrations/0006_orgs_data_scope.sql keeps these in access_guard_failures, a
  // table of its own, so migrations recreating guard_failures never collide with it).
  outside_authority: {
    code: 'FORBIDDEN',
    message: 'Refused: outside your authority (the target holds a permission or a data scope that you do not hold)',
  },
  out_of_scope: { code: 'NOT_FOUND', message: 'Not found' },
  org_cycle: { code: 'BAD_REQUEST', message: 'parentId: an organisation cannot be moved under itself or one of its descendants' },
  org_in_use: { code: 'BAD_REQUEST', message: 'ids: an organisation that still has children or users cannot be deleted' },
  // The caller's check at the head of every write batch (db/runner.ts; migrations/0015_rt_auth_guard.sql
  // keeps these in auth_guard_failures): a session ended or a code removed after the judgement.
  session_ended: { code: 'UNAUTHORIZED', message: 'Session has ended, please log in again' },
  not_permitted: { code: 'FORBIDDEN', message: 'Insufficient permission' },
  // A session restricted to enrolling a second factor (migrations/0025_second_factor.sql keeps it
  // in mfa_guard_failures): the caller holds an enabled mfaRequired role and has no factor.
  mfa_required: { code: 'FORBIDDEN', message: MFA_REQUIRED_MSG },
  // Standard modules (migrations/0020 and 0021 keep these in tables of their own).
  config_builtin: { code: 'BAD_REQUEST', message: 'ids: a built-in parameter cannot be deleted' },
  post_in_use: { code: 'BAD_REQUEST', message: 'ids: a post that users still hold cannot be deleted; take it from them first' },
  post_unknown: { code: 'BAD_REQUEST', message: 'postIds: a post does not exist (any more)' },
  // Delegation closed on every path (migrations/0019_closure_guards.sql keeps these in
  // delegation_guard_failures). Each is judged BEFORE the writes of its batch.
  widens_scope: { code: 'FORBIDDEN', message: 'dataScope: you cannot give a role a data scope wider than your own' },
  role_held_outside: {
    code: 'FORBIDDEN',
    message: 'Refused: outside your authority (the role is held by a user outside your data scope; changing it would change their powers)',
  },
  menu_code_not_held: {
    code: 'FORBIDDEN',
    message: 'Refused: outside your authority (the menu carries a permission code that you do not hold, or that is disabled)',
  },
  code_required: { code: 'FORBIDDEN', message: 'Refused: a field of this request also requires the permission code of the operation it does' },
  self_grant: { code: 'FORBIDDEN', message: 'Refused: you cannot give yourself a role or move yourself to another organisation; ask another administrator' },
  scope_all_only: { code: 'FORBIDDEN', message: 'Backups hold every row: only a caller whose data scope is `all` may use them' },
  // API keys (migrations/0026_api_keys.sql keeps these in api_key_guard_failures).
  key_code_unknown: { code: 'BAD_REQUEST', message: 'codes: a code is carried by no menu' },
  key_code_not_held: { code: 'FORBIDDEN', message: 'codes: an API key can only carry permission codes you hold now' },
} as const satisfies Record<string, { code: ErrorCode; message: string }>;
export type GuardRule = keyof typeof GUARD_RULES;
/** The CHECK constraint of each rule is named `guard_<rule>` (migrations/0004); drivers put that name in the error. */
const FAILED_RULE = new RegExp(`\\bguard_(${Object.keys(GUARD_RULES).join('|')})\\b`);
const ACCESS_RULES: readonly GuardRule[] = ['outside_authority', 'out_of_scope', 'org_cycle', 'org_in_use'];
const AUTH_RULES: readonly GuardRule[] = ['session_ended', 'not_permitted'];
/** Rules with a table of their own (the migration that added them), besides the ones below. */
const OWN_TABLE: Partial<Record<GuardRule, string>> = {
  config_builtin: 'dict_config_guard_failures',
  post_in_use: 'notice_post_guard_failures',
  post_unknown: 'notice_post_guard_failures',
  key_code_unknown: 'api_key_guard_failures',
  key_code_not_held: 'api_key_guard_failures',
  mfa_required: 'mfa_guard_failures',
};
const DELEGATION_RULES: readonly GuardRule[] = ['widens_scope', 'role_held_outside', 'menu_code_not_held', 'code_required', 'self_grant', 'scope_all_only'];

/** The table whose CHECK constraints refuse `rule` (one per migration that added rules). */
export const guardTable = (rule: GuardRule) =>
  OWN_TABLE[rule] ??
  (AUTH_RULES.includes(rule)
    ? 'auth_guard_failures'
    : ACCESS_RULES.includes(rule)
      ? 'access_guard_failures'
      : DELEGATION_RULES.includes(rule)
        ? 'delegation_guard_failures'
        : 'guard_failures');

/** A statement that fails (rolling back its batch) when `brokenWhen` is true at that point of the batch. */
export function guardStatement(rule: GuardRule, brokenWhen: RawBuilder<unknown>): CompiledQuery {
  const table = sql.table(guardTable(rule));
  return sql`INSERT INTO ${table} (rule) SELECT ${rule} WHERE ${brokenWhen}`.compile(qb);
}

/** Fails the batch unless the row still has the version the client read (optimistic locking). */
export function versionGuard(
  table: 'users' | 'roles' | 'orgs' | 'menus' | 'jobs' | 'dict_types' | 'dict_data' | 'configs' | 'notices' | 'posts',
  id: number,
  version: number,
): CompiledQuery {
  return guardStatement('stale_version', sql`NOT EXISTS (SELECT 1 FROM ${sql.table(table)} WHERE id = ${id} AND version = ${version})`);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The guard rule that made a batch fail, if a guard statement did: recognised by our own
 * constraint name, not by SQLite's wording (D1 errors carry no code, only the message).
 */
export function failedGuard(err: unknown): GuardRule | undefined {
  return FAILED_RULE.exec(messageOf(err))?.[1] as GuardRule | undefined;
}

/** A UNIQUE or PRIMARY KEY violation (bun:sqlite and D1 both carry SQLite's text). */
export function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY constraint failed/.test(messageOf(err));
}

/** A FOREIGN KEY violation, e.g. a grant naming a role or menu that does not exist (any more). */
export function isForeignKeyViolation(err: unknown): boolean {
  return messageOf(err).includes('FOREIGN KEY constraint failed');
}
