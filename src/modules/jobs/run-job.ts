import { sql, type CompiledQuery, type RawBuilder, type Selectable } from 'kysely';
import { AppError } from '../../core/errors.ts';
import { errorFields } from '../../core/log.ts';
import type { Ports } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import type { JobLogTable, JobsTable } from '../../db/schema.ts';
import type { Budget } from '../maintenance/index.ts';
import type { JobLog } from './jobs.schemas.ts';
import { staleAfter, type JobHandlers } from './registry.ts';

/**
 * One run of a job, the same for the scheduler's tick and for run now: claim it in the database
 * (one statement, so two processes or isolates can never both hold a non-concurrent job), run its
 * registered handler with a runner of its own (outside any request), then write the run's log row
 * and release the claim in one batch.
 */

export const JOB_COLUMNS = [
  'id', 'name', 'handler', 'cron', 'status', 'misfire_policy', 'concurrent', 'last_run_at', 'next_run_at',
  'schedule_from', 'claimed_at', 'claim_id', 'resume', 'version', 'created_at', 'updated_at',
] as const;
export type JobRow = Selectable<JobsTable>;

/** What a claim hands to the run: the row as the claim left it. */
export interface Claimed {
  id: number;
  name: string;
  handler: string;
}

/** Longest message kept in the job log. */
const MESSAGE_MAX = 1000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The claim, as statements of one batch: a stale claim (its run died) is first reported as an
 * interrupted run, then the job is taken — for a non-concurrent job only while nobody holds it — and
 * its row read back (none: it is held, or `only` no longer holds). `next` is the new next due time
 * (a scheduled run), or undefined to leave it (run now).
 */
export function claimStatements(
  handlers: JobHandlers,
  job: { id: number; handler: string },
  at: { now: number; claimId: string; next?: string | null; only?: RawBuilder<unknown> },
): CompiledQuery[] {
  const now = iso(at.now);
  const staleMs = staleAfter(handlers, job.handler);
  const stale = iso(at.now - staleMs);
  const only = at.only ?? sql`1`;
  const interrupted = `interrupted: the run did not report its end within ${Math.round(staleMs / 60_000)} minutes (the process stopped or the isolate was evicted)`;
  return [
    sql`INSERT INTO job_log (job_id, job_name, status, message, started_at, finished_at, duration_ms)
      SELECT id, name, 'failure', ${interrupted}, claimed_at, ${now}, CAST(round(max(0, (julianday(${now}) - julianday(claimed_at)) * 86400000)) AS INTEGER)
      FROM jobs WHERE id = ${job.id} AND concurrent = 0 AND claimed_at < ${stale} AND ${only}`.compile(qb),
    sql`UPDATE jobs SET last_run_at = ${now}, resume = 0,
        next_run_at = ${at.next === undefined ? sql.ref('next_run_at') : at.next},
        claimed_at = CASE WHEN concurrent = 0 THEN ${now} END,
        claim_id = CASE WHEN concurrent = 0 THEN ${at.claimId} END
      WHERE id = ${job.id} AND (concurrent = 1 OR claimed_at IS NULL OR claimed_at < ${stale}) AND ${only}
      RETURNING id, name, handler`.compile(qb),
  ];
}

/** The row a claim batch read back, or undefined when the job was not claimed. */
export const claimedRow = (results: readonly { rows: unknown[] }[]) => results.at(-1)?.rows[0] as Claimed | undefined;

export function toJobLog(r: Selectable<JobLogTable>): JobLog {
  return {
    id: r.id,
    jobId: r.job_id,
    jobName: r.job_name,
    status: r.status,
    message: r.message,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
  };
}

/** What a failure says in the job log: our own errors as they are; anything else by reference to the server log. */
function failureMessage(deps: Ports, job: Claimed, err: unknown): string {
  const ref = deps.ids.uuid().replaceAll('-', '');
  deps.log.log('error', 'job failed', { job: job.name, handler: job.handler, ref, ...errorFields(err) });
  if (err instanceof AppError) return err.message;
  return `unexpected error; logged with ref ${ref}`;
}

/**
 * Runs a claimed job's handler (never anything else: a name the registry lacks is reported as a
 * failure), then logs the run and releases the claim. `run` has no caller (the scheduler's, or a
 * request's detached one). `note` prefixes the message (late, continued, run now).
 */
export async function runClaimed(
  deps: Ports,
  run: Runner,
  handlers: JobHandlers,
  job: Claimed,
  claim: { id: string; startedAt: number },
  budget: Budget,
  note = '',
): Promise<{ log: JobLog; more: boolean }> {
  let status: 'success' | 'failure' = 'success';
  let message: string;
  let more = false;
  const handler = handlers.get(job.handler);
  try {
    if (!handler) throw new AppError('BAD_REQUEST', `the handler "${job.handler}" is not registered in this version of the service: nothing was run`);
    const why = handler.unavailable?.(deps);
    if (why) throw why;
    const outcome = await handler.run({ deps, run, budget });
    message = outcome.message;
    more = outcome.more === true;
  } catch (err) {
    status = 'failure';
    message = failureMessage(deps, job, err);
  }
  const finished = deps.clock.now();
  const [logged] = await run.write(
    resultsOf([
      qb
        .insertInto('job_log')
        .values({
          job_id: job.id,
          job_name: job.name,
          status,
          message: `${note}${message}`.slice(0, MESSAGE_MAX),
          started_at: iso(claim.startedAt),
          finished_at: iso(finished),
          duration_ms: Math.max(0, Math.round(finished - claim.startedAt)),
        })
        .returningAll()
        .compile(),
      sql`UPDATE jobs SET resume = ${more ? 1 : 0},
          claimed_at = CASE WHEN claim_id = ${claim.id} THEN NULL ELSE claimed_at END,
          claim_id = CASE WHEN claim_id = ${claim.id} THEN NULL ELSE claim_id END
        WHERE id = ${job.id}`.compile(qb),
    ]),
  );
  const log = toJobLog(logged!.rows[0] as Selectable<JobLogTable>);
  deps.log.log(status === 'success' ? 'info' : 'warn', 'job run', { job: job.name, handler: job.handler, status, durationMs: log.durationMs, more });
  return { log, more };
}

/**
 * At the server's start, before its first tick: a claim still held belongs to a run the previous
 * process did not finish (killed, crashed, or a restored snapshot taken while the backup job ran). It
 * is reported as interrupted and released at once instead of after its stale limit. Like
 * failInterruptedBackups, this takes the server to be the only one on its database.
 */
export async function releaseInterruptedRuns(deps: Ports, run: Runner): Promise<number> {
  const now = new Date(deps.clock.now()).toISOString();
  const [reported] = await run.record([
    sql`INSERT INTO job_log (job_id, job_name, status, message, started_at, finished_at, duration_ms)
      SELECT id, name, 'failure', 'interrupted: the server stopped while it ran', claimed_at, ${now},
        CAST(round(max(0, (julianday(${now}) - julianday(claimed_at)) * 86400000)) AS INTEGER)
      FROM jobs WHERE claimed_at IS NOT NULL RETURNING id`.compile(qb),
    sql`UPDATE jobs SET claimed_at = NULL, claim_id = NULL WHERE claimed_at IS NOT NULL`.compile(qb),
  ]);
  return reported?.rows.length ?? 0;
}
