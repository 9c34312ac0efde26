import { sql } from 'kysely';
import type { DbPorts, Ports } from '../../core/ports.ts';
import { planRun, type RunDecision } from '../../core/misfire.ts';
import { errorFields } from '../../core/log.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf, writeOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import { Budget, RUN_BUDGET } from '../maintenance/index.ts';
import { JOB_HANDLERS, type JobHandlers } from './registry.ts';
import { claimedRow, claimStatements, JOB_COLUMNS, runClaimed, type JobRow } from './run-job.ts';

/**
 * The scheduler's tick, which both runtimes drive every minute: the server's timer
 * (entry/job-timer.ts) and the Workers cron trigger (entry/worker-handler.ts). It reads the enabled
 * jobs, decides per job from its cron, its last run and its misfire policy (core/misfire.ts) whether
 * a due time calls for a run, and runs those one after the other, each claimed first: a tick in
 * another process or isolate that read the same row finds its claim refused and moves on, so a due
 * time runs once wherever the ticks come from.
 *
 * The tick keeps the guarantees of the maintenance runs: one Budget (RUN_BUDGET database statements
 * and blob calls, its own reads, claims and log rows included) for everything it runs, so one
 * Workers invocation stays under its limit; a run that stops at the budget with work left marks its
 * job `resume`, and the next tick continues it whatever the cron (the server's timer ticks again
 * after a few seconds).
 */

/**
 * How late a tick may come and still count as on time: Workers deliver cron events up to a few
 * minutes late under load, and a run that late is no misfire.
 */
export const TICK_GRACE_MS = 5 * 60_000;

const ENABLED_JOBS = qb.selectFrom('jobs').select(JOB_COLUMNS).where('status', '=', 'enabled').orderBy('id').compile();

export interface TickReport {
  /** The runs this tick made, in order. */
  ran: { job: string; status: 'success' | 'failure'; message: string }[];
  /** Jobs whose missed due times their `skip` policy dropped. */
  skipped: string[];
  /** A run left work, or the budget ran out before every due job ran: tick again soon. */
  more: boolean;
}

export interface TickOptions {
  /** The registry (tests pass their own; the default is the service's). */
  handlers?: JobHandlers;
  budget?: Budget;
}

/** Due times before this one do not count as missed: the later of the last run and the schedule's (re)start. */
function baseline(job: JobRow): Date {
  const from = Date.parse(job.schedule_from);
  const last = job.last_run_at ? Date.parse(job.last_run_at) : -Infinity;
  return new Date(Math.max(from, last));
}

export async function tick(deps: Ports & DbPorts, opts: TickOptions = {}): Promise<TickReport> {
  const handlers = opts.handlers ?? JOB_HANDLERS;
  const budget = opts.budget ?? new Budget(RUN_BUDGET);
  const report: TickReport = { ran: [], skipped: [], more: false };
  // Outside any request: a runner with no caller.
  const run = new Runner(deps);
  if (!budget.take()) return { ...report, more: true };
  const jobs = await run.rows<JobRow>(ENABLED_JOBS);
  for (const job of jobs) {
    const now = deps.clock.now();
    let plan: RunDecision;
    try {
      plan = planRun({ expr: job.cron, lastRunAt: baseline(job), now: new Date(now), policy: job.misfire_policy, graceMs: TICK_GRACE_MS });
    } catch (err) {
      // Only a write behind the API's back stores a bad expression: reported, never run.
      deps.log.log('error', 'job not scheduled: its cron expression is invalid', { job: job.name, cron: job.cron, ...errorFields(err) });
      continue;
    }
    const next = plan.nextRunAt?.toISOString() ?? null;
    // The row as this tick read it: a run elsewhere, an edit or a disable since makes every write below a no-op.
    const unchanged = sql`version = ${job.version} AND last_run_at IS ${job.last_run_at} AND status = 'enabled'`;
    if (!plan.run && job.resume !== 1) {
      if (plan.reason === 'misfire-skipped' && budget.take()) {
        // Forget the missed due times: the job waits for its next one.
        await run.write(writeOf([sql`UPDATE jobs SET schedule_from = ${new Date(now).toISOString()}, next_run_at = ${next}
          WHERE id = ${job.id} AND ${unchanged} AND schedule_from = ${job.schedule_from}`.compile(qb)]));
        report.skipped.push(job.name);
        deps.log.log('info', 'job due times skipped (misfire policy skip)', { job: job.name, missed: plan.missed, next });
      } else if (job.next_run_at !== next && budget.take()) {
        await run.write(writeOf([sql`UPDATE jobs SET next_run_at = ${next} WHERE id = ${job.id} AND ${unchanged}`.compile(qb)]));
      }
      continue;
    }
    // The claim and the log row of the run are reserved before its work takes the rest, and a run
    // starts only with room for some work (the jobs after it wait for the next tick).
    if (budget.limit - budget.used < 3 || !budget.take(2)) {
      report.more = true;
      break;
    }
    const claim = { id: deps.ids.uuid(), startedAt: now };
    const claimed = claimedRow(await run.write(resultsOf(claimStatements(handlers, job, { now, claimId: claim.id, next, only: unchanged }))));
    if (!claimed) {
      deps.log.log('debug', 'job not claimed: it runs elsewhere or changed since this tick read it', { job: job.name });
      continue;
    }
    const note = plan.reason === 'misfire-fired' ? `late: ${plan.missed} earlier due time(s) missed; ` : plan.run ? '' : 'continued; ';
    const { log, more } = await runClaimed(deps, run, handlers, claimed, claim, budget, note);
    report.ran.push({ job: log.jobName, status: log.status, message: log.message });
    report.more ||= more;
  }
  return report;
}
