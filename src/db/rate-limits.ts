import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../core/ports.ts';
import { isoNow } from '../core/time.ts';
import { qb } from './compile.ts';
import type { Runner } from './runner.ts';

export interface WindowRule {
  limit: number;
  windowMs: number;
  /** When set, reaching `limit` locks the key for this long. */
  lockMs?: number;
}

/**
 * The upsert that counts one event for `key` in a fixed window, locking it at the limit. With
 * `unlessLocked`, a key locked now is left as it is (its lock not extended) and no row comes back.
 * With `onlyWhen`, nothing is counted (and no row comes back) unless that SQL condition holds.
 */
export function hitQuery(clock: Clock, key: string, rule: WindowRule, opts: { unlessLocked?: boolean; onlyWhen?: RawBuilder<unknown> } = {}) {
  const now = isoNow(clock);
  const cutoff = isoNow(clock, -rule.windowMs);
  const lockUntil = rule.lockMs ? isoNow(clock, rule.lockMs) : null;
  const fresh = sql`rate_limits.window_start <= ${cutoff}`;
  const nextCount = sql<number>`CASE WHEN ${fresh} THEN 1 ELSE rate_limits.count + 1 END`;
  const first = { key, count: 1, window_start: now, locked_until: rule.limit <= 1 ? lockUntil : null };
  const insert = opts.onlyWhen
    ? // INSERT … SELECT with its WHERE (which an upsert needs after a SELECT); the row's conflict is then skipped too.
      qb
        .insertInto('rate_limits')
        .columns(['key', 'count', 'window_start', 'locked_until'])
        .expression(qb.selectNoFrom((eb) => Object.entries(first).map(([k, v]) => eb.val(v).as(k))).where(opts.onlyWhen as RawBuilder<boolean>))
    : qb.insertInto('rate_limits').values(first);
  return insert
    .onConflict((oc) => {
      const update = oc.column('key').doUpdateSet({
        count: nextCount,
        window_start: sql`CASE WHEN ${fresh} THEN ${now} ELSE rate_limits.window_start END`,
        locked_until: sql`CASE WHEN ${nextCount} >= ${rule.limit} THEN ${lockUntil} ELSE rate_limits.locked_until END`,
      });
      return opts.unlessLocked ? update.where(sql<boolean>`coalesce(rate_limits.locked_until <= ${now}, 1)`) : update;
    })
    .returning(['count', 'window_start', 'locked_until']);
}

/**
 * Counts one event for `key` in a fixed window, in one atomic upsert, so parallel requests cannot
 * both slip under the limit. Returns the count in the current window and any lock end.
 */
export async function hit(run: Runner, clock: Clock, key: string, rule: WindowRule) {
  const [upserted] = await run.record([hitQuery(clock, key, rule).compile()]);
  const row = upserted!.rows[0] as { count: number; window_start: string; locked_until: string | null };
  return { count: row.count, windowStart: row.window_start, lockedUntil: row.locked_until };
}

/** Milliseconds until the latest lock on any of `keys` ends; 0 when none is locked. */
export async function lockedFor(run: Runner, clock: Clock, keys: string[]): Promise<number> {
  return lockedMs(clock, await run.rows(lockedForQuery(clock, keys)));
}

/** lockedFor as a statement, to join a batch; lockedMs reads its rows. */
export function lockedForQuery(clock: Clock, keys: string[]) {
  return qb
    .selectFrom('rate_limits')
    .select((eb) => eb.fn.max('locked_until').as('until'))
    .where('key', 'in', keys)
    .where('locked_until', '>', isoNow(clock))
    .compile();
}

/** Milliseconds until the lock lockedForQuery found ends; 0 when none. */
export function lockedMs(clock: Clock, rows: readonly unknown[] | undefined): number {
  const until = (rows?.[0] as { until?: string | null } | undefined)?.until;
  return until ? Date.parse(until) - clock.now() : 0;
}

/** A throttled subject: its failure counter's key and rule. */
export interface Subject {
  key: string;
  rule: WindowRule;
}

/** An attempt in flight (reserved, outcome not known yet) stops counting after this long. */
const PENDING_MS = 30_000;

/**
 * Reservation rows live in rate_limits under `pending:<length>:<key>#<id>`: the length makes the
 * prefix unambiguous whatever characters a login name holds, so one subject's reservations can be
 * counted with a key range (`#` .. `$`) and no name can pose as another's reservation.
 */
const pendingPrefix = (key: string) => `pending:${key.length}:${key}#`;
export const pendingKey = (key: string, id: string) => pendingPrefix(key) + id;

/**
 * Reserves one in-flight slot on every subject in ONE statement, or none at all: a subject is full
 * when it is locked, or when its failures in the window plus the attempts still in flight reach
 * its limit. So a parallel burst never gets more outcomes than the limit allows, while attempts
 * that are refused a slot only because others are still in flight can wait for them (their
 * outcome may well be a success, which costs nothing).
 */
export async function reserve(run: Runner, clock: Clock, subjects: Subject[], id: string): Promise<boolean> {
  const [inserted] = await run.record([reserveQuery(clock, subjects, id)]);
  return reserved(inserted, subjects);
}

/** Whether reserveQuery's result took a slot on every subject. */
export function reserved(result: { numAffectedRows?: bigint } | undefined, subjects: Subject[]): boolean {
  return Number(result?.numAffectedRows ?? 0n) === subjects.length;
}

/** reserve as a statement, to join a batch (see reserve). */
export function reserveQuery(clock: Clock, subjects: Subject[], id: string) {
  const now = isoNow(clock);
  const stale = isoNow(clock, -PENDING_MS);
  const full = ({ key, rule }: Subject) => {
    const prefix = pendingPrefix(key);
    const end = `${prefix.slice(0, -1)}$`;
    return sql`(EXISTS (SELECT 1 FROM rate_limits WHERE key = ${key} AND locked_until > ${now})
      OR coalesce((SELECT count FROM rate_limits WHERE key = ${key} AND window_start > ${isoNow(clock, -rule.windowMs)}), 0)
       + (SELECT count(*) FROM rate_limits WHERE key > ${prefix} AND key < ${end} AND window_start > ${stale}) >= ${rule.limit})`;
  };
  const rows = sql.join(
    subjects.map((s) => sql`SELECT ${pendingKey(s.key, id)} AS k`),
    sql` UNION ALL `,
  );
  return sql`INSERT INTO rate_limits (key, count, window_start, locked_until)
    SELECT k, 0, ${now}, NULL FROM (${rows}) WHERE NOT (${sql.join(subjects.map(full), sql` OR `)})`.compile(qb);
}

/** Drops the reservations of attempt `id`, compiled so it can join the outcome's batch. */
export function releaseQuery(subjects: Subject[], id: string) {
  return qb
    .deleteFrom('rate_limits')
    .where(
      'key',
      'in',
      subjects.map((s) => pendingKey(s.key, id)),
    )
    .compile();
}
