import { sql, type RawBuilder } from 'kysely';
import type { DbPorts, Ports } from '../../core/ports.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import { cleanupBlobs } from '../files/index.ts';
import { Budget, DELETE_CHUNK, RUN_BUDGET } from './budget.ts';

const DAY = 86_400_000;

type SweptTable = 'captchas' | 'sessions' | 'rate_limits' | 'login_log' | 'op_log' | 'job_log';
const KEY_COLUMN: Record<SweptTable, string> = { captchas: 'key', sessions: 'id', rate_limits: 'key', login_log: 'id', op_log: 'id', job_log: 'id' };

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

/** What one part of the housekeeping did: rows or blobs removed per kind, and whether work is left. */
export interface SweepResult {
  counts: Record<string, number>;
  more: boolean;
}

/** Deletes per table under one budget, gathering the counts and whether rows may remain. */
function sweeper(run: Runner, budget: Budget) {
  const result: SweepResult = { counts: {}, more: false };
  const sweep = async (name: string, table: SweptTable, where: RawBuilder<unknown>) => {
    const r = await chunkedDelete(run, budget, table, where);
    result.counts[name] = r.deleted;
    result.more ||= r.more;
  };
  return { sweep, result };
}

/** The job `expiredCleanup`: expired captchas, sessions past expiry (or revoked a day ago), stale rate-limit windows. */
export async function expiredCleanup(deps: Ports, run: Runner, budget: Budget): Promise<SweepResult> {
  const now = isoNow(deps.clock);
  const dayAgo = isoNow(deps.clock, -DAY);
  const { sweep, result } = sweeper(run, budget);
  await sweep('captchas', 'captchas', sql`expires_at <= ${now}`);
  await sweep('sessions', 'sessions', sql`expires_at <= ${now} OR revoked_at <= ${dayAgo}`);
  await sweep('rateLimits', 'rate_limits', sql`window_start <= ${dayAgo} AND (locked_until IS NULL OR locked_until <= ${now})`);
  return result;
}

/** The job `logRetention`: login, operation and job log rows older than LOG_RETENTION_DAYS (0 keeps them forever). */
export async function logRetention(deps: Ports, run: Runner, budget: Budget): Promise<SweepResult> {
  const { sweep, result } = sweeper(run, budget);
  if (deps.config.LOG_RETENTION_DAYS > 0) {
    const cutoff = isoNow(deps.clock, -deps.config.LOG_RETENTION_DAYS * DAY);
    await sweep('loginLog', 'login_log', sql`created_at < ${cutoff}`);
    await sweep('opLog', 'op_log', sql`created_at < ${cutoff}`);
    await sweep('jobLog', 'job_log', sql`started_at < ${cutoff}`);
  }
  return result;
}

/**
 * All of the periodic housekeeping in one run: expiredCleanup, logRetention and the blob sweep
 * (cleanupBlobs), which the scheduler runs as three jobs (modules/jobs). Each run is bounded
 * (RUN_BUDGET statements and blob calls, deletes in chunks) and resumable; `more: 1` in the
 * result says the next run has work left.
 */
export async function cleanup(deps: Ports & DbPorts, budget = new Budget(RUN_BUDGET)): Promise<Record<string, number>> {
  // Outside any request: a runner with no caller.
  const run = new Runner(deps);
  const parts = [await expiredCleanup(deps, run, budget), await logRetention(deps, run, budget), await cleanupBlobs(deps, run, budget)];
  const counts: Record<string, number> = Object.assign({}, ...parts.map((p) => p.counts));
  counts.calls = budget.used;
  counts.more = parts.some((p) => p.more) ? 1 : 0;
  return counts;
}
