import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { isoNow } from '../../core/time.ts';

export interface WindowRule {
  limit: number;
  windowMs: number;
  /** When set, reaching `limit` locks the key for this long. */
  lockMs?: number;
}

/**
 * Counts one event for `key` in a fixed window, in one atomic upsert, so parallel requests cannot
 * both slip under the limit. Returns the count in the current window and any lock end.
 */
export async function hit(deps: Deps, key: string, rule: WindowRule) {
  const now = isoNow(deps.clock);
  const cutoff = isoNow(deps.clock, -rule.windowMs);
  const lockUntil = rule.lockMs ? isoNow(deps.clock, rule.lockMs) : null;
  const fresh = sql`rate_limits.window_start <= ${cutoff}`;
  const nextCount = sql<number>`CASE WHEN ${fresh} THEN 1 ELSE rate_limits.count + 1 END`;
  const row = await deps.db
    .insertInto('rate_limits')
    .values({ key, count: 1, window_start: now, locked_until: rule.limit <= 1 ? lockUntil : null })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: nextCount,
        window_start: sql`CASE WHEN ${fresh} THEN ${now} ELSE rate_limits.window_start END`,
        locked_until: sql`CASE WHEN ${nextCount} >= ${rule.limit} THEN ${lockUntil} ELSE rate_limits.locked_until END`,
      }),
    )
    .returning(['count', 'window_start', 'locked_until'])
    .executeTakeFirstOrThrow();
  return { count: row.count, windowStart: row.window_start, lockedUntil: row.locked_until };
}

/** Milliseconds until the latest lock on any of `keys` ends; 0 when none is locked. */
export async function lockedFor(deps: Deps, keys: string[]): Promise<number> {
  const now = isoNow(deps.clock);
  const row = await deps.db
    .selectFrom('rate_limits')
    .select((eb) => eb.fn.max('locked_until').as('until'))
    .where('key', 'in', keys)
    .where('locked_until', '>', now)
    .executeTakeFirst();
  return row?.until ? Date.parse(row.until) - deps.clock.now() : 0;
}

/**
 * Takes back one counted event (an attempt reserved before its outcome was known that turned out
 * fine), lifting a lock that only that event had caused.
 */
export function releaseQuery(deps: Deps, key: string, rule: WindowRule) {
  return deps.db
    .updateTable('rate_limits')
    .set({
      count: sql`max(count - 1, 0)`,
      locked_until: sql`CASE WHEN count - 1 < ${rule.limit} THEN NULL ELSE locked_until END`,
    })
    .where('key', '=', key)
    .compile();
}
