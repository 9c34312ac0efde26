import { sql, type CompiledQuery } from 'kysely';
import { heldBy, holdsGuard, holdsStatement } from '../../access/held.ts';
import { cronError, nextRun } from '../../core/cron.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { containsPattern, pageStatements } from '../../core/pagination.ts';
import type { Ports } from '../../core/ports.ts';
import { prepare, qb } from '../../db/compile.ts';
import { versionGuard } from '../../db/guards.ts';
import type { Runner } from '../../db/runner.ts';
import { Budget, RUN_BUDGET } from '../maintenance/index.ts';
import type { Job, JobEditInput, JobLog, JobPageInput } from './jobs.schemas.ts';
import { JOB_HANDLERS, staleAfter, type JobHandlers } from './registry.ts';
import { claimedRow, claimStatements, JOB_COLUMNS, runClaimed, type JobRow } from './run-job.ts';

const JOB_BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('jobs').select(JOB_COLUMNS).where('id', '=', p.id));
const STATUS_CODE = 'sys:job:changeStatus';
const STATUS_NEEDS_CODE = `status: changing it also requires the permission ${STATUS_CODE}`;

/** The next due time of an enabled job after `now` (the display value while no tick has stored one). */
function nextDue(cron: string, now: number): string | null {
  return cronError(cron) ? null : (nextRun(cron, new Date(now))?.toISOString() ?? null);
}

export function toJob(r: JobRow, now: number, handlers: JobHandlers = JOB_HANDLERS): Job {
  const enabled = r.status === 'enabled';
  return {
    id: r.id,
    name: r.name,
    handler: r.handler,
    cron: r.cron,
    status: r.status,
    misfirePolicy: r.misfire_policy,
    concurrent: r.concurrent === 1,
    lastRunAt: r.last_run_at,
    nextRunAt: enabled ? (r.next_run_at ?? nextDue(r.cron, now)) : null,
    running: r.claimed_at !== null && Date.parse(r.claimed_at) > now - staleAfter(handlers, r.handler),
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The rows a page of jobs selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function jobFilter(p: JobPageInput['params']) {
  let q = qb.selectFrom('jobs');
  if (p.name !== undefined) {
    const like = containsPattern(p.name);
    q = q.where(sql<boolean>`(name LIKE ${like} ESCAPE '\\' OR handler LIKE ${like} ESCAPE '\\')`);
  }
  if (p.status) q = q.where('status', '=', p.status);
  return q;
}

export function pageJobs(deps: Ports, run: Runner, req: JobPageInput) {
  const q = jobFilter(req.params);
  const now = deps.clock.now();
  const page = pageStatements(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (s) => s.select(JOB_COLUMNS),
    sortColumns: { id: 'id', name: 'name', lastRunAt: 'last_run_at', nextRunAt: 'next_run_at' },
    defaultSort: 'id',
    idColumn: 'id',
    map: (r: JobRow) => toJob(r, now),
  });
  return run.read({ reads: page.statements, finish: page.finish });
}

async function requireJob(run: Runner, id: number): Promise<JobRow> {
  const row = await run.first<JobRow>(JOB_BY_ID.bind({ id }));
  if (!row) throw notFound('Job not found');
  return row;
}

export async function jobDetail(deps: Ports, run: Runner, id: number): Promise<Job> {
  return toJob(await requireJob(run, id), deps.clock.now());
}

/**
 * The write of an edit (under the version the client read: a change since is 409) or of a status
 * change (no version, like every changeStatus). The schedule restarts (missed due times are counted
 * from now) when the cron changes or the job is enabled; nextRunAt is recomputed from the cron now in
 * force (should an edit land between a status change's read and write, the next tick corrects it).
 */
async function writeSchedule(
  deps: Ports,
  run: Runner,
  row: JobRow,
  version: number | undefined,
  change: { cron?: string | undefined; status?: 'enabled' | 'disabled' | undefined; misfirePolicy?: 'fire' | 'skip' | undefined; concurrent?: boolean | undefined },
  guards: CompiledQuery[],
): Promise<Job> {
  const now = deps.clock.now();
  const cron = change.cron ?? row.cron;
  const status = change.status ?? row.status;
  if (status === 'enabled' && change.cron === undefined && cronError(cron)) {
    throw badRequest(`cron: the stored expression is invalid (${cronError(cron)}): send a new one`);
  }
  const restart = (change.cron !== undefined && change.cron !== row.cron) || (status === 'enabled' && row.status !== 'enabled');
  const set: Record<string, unknown> = {
    status,
    cron,
    next_run_at: status === 'enabled' ? nextDue(cron, now) : null,
    updated_at: new Date(now).toISOString(),
  };
  if (change.misfirePolicy !== undefined) set.misfire_policy = change.misfirePolicy;
  if (change.concurrent !== undefined) set.concurrent = change.concurrent ? 1 : 0;
  if (restart) set.schedule_from = new Date(now).toISOString();
  return run.write({
    batch: [
      ...(version === undefined ? [] : [versionGuard('jobs', row.id, version)]),
      ...guards,
      qb
        .updateTable('jobs')
        .set((eb) => ({ ...set, version: eb('version', '+', 1) }))
        .where('id', '=', row.id)
        .compile(),
      qb.selectFrom('jobs').select(JOB_COLUMNS).where('id', '=', row.id).compile(),
    ],
    errors: { messages: { code_required: STATUS_NEEDS_CODE } },
    finish: (results) => toJob(results.at(-1)!.rows[0] as JobRow, now),
  });
}

/** Partial edit under the version check; `status` also needs sys:job:changeStatus (403). */
export async function editJob(deps: Ports, run: Runner, input: JobEditInput): Promise<Job> {
  const withStatus = input.status !== undefined;
  // The row and (for a status) whether the caller holds its code: one read, with the auth row.
  const [row, mayChangeStatus] = await run.read({
    reads: [JOB_BY_ID.bind({ id: input.id }), ...(withStatus ? [holdsStatement(run.userId, STATUS_CODE)] : [])],
    finish: (rows) => [rows[0]?.[0] as JobRow | undefined, !withStatus || heldBy(rows[1])] as const,
  });
  if (!row) throw notFound('Job not found');
  if (!mayChangeStatus) throw forbidden(STATUS_NEEDS_CODE);
  if (row.version !== input.version) throw conflict('version: the record was changed by someone else; reload it and try again');
  const guards = withStatus ? holdsGuard(await run.caller(), STATUS_CODE) : [];
  return writeSchedule(deps, run, row, input.version, input, guards);
}

/** Enable or disable a job (enabling restarts its schedule: nothing counts as missed while it was off). */
export async function changeJobStatus(deps: Ports, run: Runner, input: { id: number; status: 'enabled' | 'disabled' }): Promise<Job> {
  const row = await requireJob(run, input.id);
  return writeSchedule(deps, run, row, undefined, { status: input.status }, []);
}

/**
 * Runs a job now, through the same claim as the scheduler: 409 while a run of a non-concurrent job
 * holds it (here or in any other process or isolate). Waits for the run and answers its log row (a
 * failed run is a 200 whose row says `failure` and why). A disabled job runs too: run now is explicit.
 */
export async function runJobNow(deps: Ports, run: Runner, id: number, handlers: JobHandlers = JOB_HANDLERS): Promise<JobLog> {
  const row = await requireJob(run, id);
  const handler = handlers.get(row.handler);
  if (!handler) throw badRequest(`id: the job's handler "${row.handler}" is not registered in this version of the service: nothing was run`);
  const unavailable = handler.unavailable?.(deps);
  if (unavailable) throw unavailable;
  const claim = { id: deps.ids.uuid(), startedAt: deps.clock.now() };
  const claimed = await run.write({
    batch: claimStatements(handlers, row, { now: claim.startedAt, claimId: claim.id }),
    finish: claimedRow,
  });
  if (!claimed) throw conflict(`The job "${row.name}" is running and is not concurrent: try again once it has finished`);
  // The run itself is the job's, not the request's: a runner with no caller, as the scheduler's.
  return (await runClaimed(deps, run.detached(), handlers, claimed, claim, new Budget(RUN_BUDGET), 'run now; ')).log;
}
