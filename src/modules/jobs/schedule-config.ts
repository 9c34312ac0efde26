import { sql } from 'kysely';
import { nextRun } from '../../core/cron.ts';
import type { DbPorts, Ports } from '../../core/ports.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import { releaseInterruptedRuns } from './run-job.ts';

/**
 * BACKUP_EVERY_HOURS as the backup job's schedule. Before jobs, a backup ran every N hours counted
 * from the server's start; a cron expression counts from the clock instead:
 * - 0: no scheduled backups (the job is disabled);
 * - 1-23: at minute 0 of every Nth hour of the day (`0 *∕N * * *`); when N does not divide 24 the
 *   last gap of each day is shorter (N = 5: 00, 05, 10, 15, 20, then 00);
 * - 24 and more: daily at 03:00 UTC, or every round(N / 24)th day of the month at 03:00 (the month's
 *   end restarts the count); more than 15 days: monthly, on the 1st.
 * `exact` is false where the expression only approximates the interval.
 */
export function backupSchedule(hours: number): { cron: string; status: 'enabled' | 'disabled'; exact: boolean } {
  if (hours <= 0) return { cron: '0 3 * * *', status: 'disabled', exact: true };
  if (hours < 24) return { cron: hours === 1 ? '0 * * * *' : `0 */${hours} * * *`, status: 'enabled', exact: 24 % hours === 0 };
  const days = Math.round(hours / 24);
  if (days > 15) return { cron: '0 3 1 * *', status: 'enabled', exact: false };
  return { cron: days === 1 ? '0 3 * * *' : `0 3 */${days} * *`, status: 'enabled', exact: hours === 24 };
}

/**
 * Applies the configuration's schedule to the seeded backup job at the server's start, as long as
 * nobody changed the job through the API (its version is still the seeded 1; this write keeps it
 * there): the configuration is the default, an edit or a status change through the API wins from
 * then on. Returns what it did, for the start-up log.
 */
export async function applyScheduleConfig(deps: Ports & DbPorts): Promise<{ job: string; cron: string; status: string; applied: boolean; exact: boolean }> {
  const wanted = backupSchedule(deps.config.BACKUP_EVERY_HOURS);
  const now = deps.clock.now();
  const next = wanted.status === 'enabled' ? (nextRun(wanted.cron, new Date(now))?.toISOString() ?? null) : null;
  // Outside any request: a runner with no caller.
  const [changed] = await new Runner(deps).write(
    resultsOf([
      sql`UPDATE jobs SET cron = ${wanted.cron}, status = ${wanted.status}, next_run_at = ${next}, schedule_from = ${isoNow(deps.clock)}, updated_at = ${isoNow(deps.clock)}
        WHERE handler = 'backup' AND version = 1 AND (cron <> ${wanted.cron} OR status <> ${wanted.status})
        RETURNING id`.compile(qb),
    ]),
  );
  return { job: 'backup', cron: wanted.cron, status: wanted.status, applied: (changed?.rows.length ?? 0) > 0, exact: wanted.exact };
}

/** At the server's start: runs the previous process left unfinished are reported and their claims released. */
export function failInterruptedRuns(deps: Ports & DbPorts): Promise<number> {
  // Outside any request: a runner with no caller.
  return releaseInterruptedRuns(deps, new Runner(deps));
}
