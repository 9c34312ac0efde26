import { assertCron, nextRun, previousRun, runsAfter } from './cron.ts';

/**
 * What a scheduler tick should do for one job: run it now or not, and when to look next. A tick
 * comes every minute (Workers cron trigger, or the server's timer), late when the process slept,
 * was down or was busy; times a job was due that passed without its run are "missed".
 * - on time: the latest due time is at most `graceMs` (default 60 s) old: run, whatever the policy;
 * - `fire`: something was missed and the latest due time is older: run ONCE now, for all of them;
 * - `skip`: the same case: do not run; the job waits for its next due time.
 * `lastRunAt` is when the job last started (a run-now counts); null: never, so nothing counts as
 * missed and only an on-time due time runs it.
 */

export type MisfirePolicy = 'fire' | 'skip';
export type RunReason = 'not-due' | 'on-time' | 'misfire-fired' | 'misfire-skipped';

export interface RunDecision {
  run: boolean;
  reason: RunReason;
  /** The due time this run stands for (the latest one), or null when it does not run. */
  scheduledFor: Date | null;
  /** Due times after lastRunAt that passed without an on-time run, counted up to MISSED_COUNT_CAP. */
  missed: number;
  /** The first due time after `now` (null: never again). */
  nextRunAt: Date | null;
}

export interface RunQuestion {
  expr: string;
  timeZone?: string;
  lastRunAt: Date | null;
  now: Date;
  policy: MisfirePolicy;
  graceMs?: number;
}

export const MISFIRE_GRACE_MS = 60_000;
/** Counting stops here (a minutely job down for a year missed 525,600 times: "1000+" is enough). */
export const MISSED_COUNT_CAP = 1000;

export function planRun(q: RunQuestion): RunDecision {
  const timeZone = q.timeZone ?? 'UTC';
  const graceMs = q.graceMs ?? MISFIRE_GRACE_MS;
  assertCron(q.expr, timeZone);
  const nextRunAt = nextRun(q.expr, q.now, timeZone);
  const latest = previousRun(q.expr, q.now, timeZone);
  const since = q.lastRunAt ?? new Date(q.now.getTime() - graceMs);
  if (!latest || latest.getTime() <= since.getTime()) return { run: false, reason: 'not-due', scheduledFor: null, missed: 0, nextRunAt };
  const onTime = q.now.getTime() - latest.getTime() <= graceMs;
  let due = 0;
  for (const t of runsAfter(q.expr, since, timeZone)) {
    if (t.getTime() > latest.getTime() || due >= MISSED_COUNT_CAP + 1) break;
    due++;
  }
  const missed = Math.min(MISSED_COUNT_CAP, due - (onTime ? 1 : 0));
  if (onTime) return { run: true, reason: 'on-time', scheduledFor: latest, missed, nextRunAt };
  if (q.policy === 'fire') return { run: true, reason: 'misfire-fired', scheduledFor: latest, missed, nextRunAt };
  return { run: false, reason: 'misfire-skipped', scheduledFor: null, missed, nextRunAt };
}
