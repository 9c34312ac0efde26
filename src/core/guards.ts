import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';

/**
 * Rules checked INSIDE an atomic write (see migrations/0002_guard_failures.sql; the table is
 * recreated with every rule by 0004_super_admin_guard.sql): a guard statement
 * placed in the same deps.atomic batch fails the whole batch when its condition holds, so two
 * concurrent requests cannot each pass a check made before either wrote.
 */
export const GUARD_RULES = ['last_super_admin', 'stale_version', 'role_in_use', 'super_admin_only'] as const;
/** Access-control rules (migrations/0006_orgs_data_scope.sql keeps them in a table of their own). */
export const ACCESS_GUARD_RULES = ['outside_authority', 'out_of_scope', 'org_cycle', 'org_in_use'] as const;
export type GuardRule = (typeof GUARD_RULES)[number] | (typeof ACCESS_GUARD_RULES)[number];

const isAccessRule = (rule: GuardRule) => (ACCESS_GUARD_RULES as readonly string[]).includes(rule);

/** A statement that fails (rolling back its batch) when `brokenWhen` is true at that point of the batch. */
export function guardStatement(db: Kysely<any>, rule: GuardRule, brokenWhen: RawBuilder<unknown>): CompiledQuery {
  const table = sql.table(isAccessRule(rule) ? 'access_guard_failures' : 'guard_failures');
  return sql`INSERT INTO ${table} (rule) SELECT ${rule} WHERE ${brokenWhen}`.compile(db);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The guard rule that made a batch fail, if a guard statement did. */
export function failedGuard(err: unknown): GuardRule | undefined {
  const msg = messageOf(err);
  if (!msg.includes('CHECK constraint failed')) return undefined;
  return [...GUARD_RULES, ...ACCESS_GUARD_RULES].find((rule) => msg.includes(`guard_${rule}`));
}

/** A UNIQUE or PRIMARY KEY violation (bun:sqlite and D1 both carry SQLite's text). */
export function isUniqueViolation(err: unknown): boolean {
  return /UNIQUE constraint failed|PRIMARY KEY constraint failed/.test(messageOf(err));
}

/** A FOREIGN KEY violation, e.g. a grant naming a role or menu that does not exist (any more). */
export function isForeignKeyViolation(err: unknown): boolean {
  return messageOf(err).includes('FOREIGN KEY constraint failed');
}
