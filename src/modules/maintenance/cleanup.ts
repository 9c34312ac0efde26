import { sql, type RawBuilder } from 'kysely';
import type { DbPorts, Ports } from '../../core/ports.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import { cleanupBlobs } from '../files/index.ts';
import { Budget, DELETE_CHUNK, RUN_BUDGET } from './budget.ts';

const DAY = 86_400_000;

type SweptTable = 'captchas' | 'sessions' | 'rate_limits' | 'login_log' | 'op_log';
const KEY_COLUMN: Record<SweptTable, string> = { captchas: 'key', sessions: 'id', rate_limits: 'key', login_log: 'id', op_log: 'id' };

/**
 * Deletes the rows of `table` matching `where` in chunks of DELETE_CHUNK, one statement per chunk,
 * while the budget lasts. The condition is a cut-off in time, so a later run simply continues.
 * Returns the rows deleted and whether rows may remain.
 */
async function chunkedDelete(run: Runner, budget: Budget, table: SweptTable, where: RawBuilder<unknown>) {
  const key = sql.ref(KEY_COLUMN[table]);
  let deleted = 0;
  while (budget.take()) {
    // Rows returned, not numAffectedRows: on D1 that includes the log count triggers' writes (0011).
    const [r] = await run.write(
      resultsOf([sql`DELETE FROM ${sql.table(table)} WHERE ${key} IN (SELECT ${key} FROM ${sql.table(table)} WHERE ${where} LIMIT ${DELETE_CHUNK}) RETURNING 1 AS gone`.compile(qb)]),
    );
    const n = r?.rows.length ?? 0;
    deleted += n;
    if (n < DELETE_CHUNK) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/**
 * Periodic housekeeping, run by the server's timer and by the Workers cron trigger: expired
 * captchas, sessions past expiry (or revoked a day ago), stale rate-limit windows, log rows older
 * than LOG_RETENTION_DAYS (0 keeps them forever), and blobs (see cleanupBlobs). Each run is bounded
 * (RUN_BUDGET statements and blob calls, deletes in chunks) and resumable; `more: 1` in the result
 * says the next run has work left (the Bun timer then runs again soon).
 */
export async function cleanup(deps: Ports & DbPorts, budget = new Budget(RUN_BUDGET)): Promise<Record<string, number>> {
  const { clock, config } = deps;
  // Outside any request: a runner with no caller.
  const run = new Runner(deps);
  const now = isoNow(clock);
  const dayAgo = isoNow(clock, -DAY);
  const counts: Record<string, number> = {};
  let more = false;
  const sweep = async (name: string, table: SweptTable, where: RawBuilder<unknown>) => {
    const r = await chunkedDelete(run, budget, table, where);
    counts[name] = r.deleted;
    more ||= r.more;
  };
  await sweep('captchas', 'captchas', sql`expires_at <= ${now}`);
  await sweep('sessions', 'sessions', sql`expires_at <= ${now} OR revoked_at <= ${dayAgo}`);
  await sweep('rateLimits', 'rate_limits', sql`window_start <= ${dayAgo} AND (locked_until IS NULL OR locked_until <= ${now})`);
  if (config.LOG_RETENTION_DAYS > 0) {
    const cutoff = isoNow(clock, -config.LOG_RETENTION_DAYS * DAY);
    await sweep('loginLog', 'login_log', sql`created_at < ${cutoff}`);
    await sweep('opLog', 'op_log', sql`created_at < ${cutoff}`);
  }
  const blobs = await cleanupBlobs(deps, run, budget);
  more ||= blobs.more;
  Object.assign(counts, blobs.counts);
  counts.calls = budget.used;
  counts.more = more ? 1 : 0;
  return counts;
}
