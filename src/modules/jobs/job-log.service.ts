import type { Selectable } from 'kysely';
import { pageStatements, whereCreatedBetween } from '../../core/pagination.ts';
import type { Ports } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import { countedDelete } from '../../db/log-counts.ts';
import type { Runner } from '../../db/runner.ts';
import type { JobLogTable } from '../../db/schema.ts';
import type { JobLogPageInput } from './jobs.schemas.ts';
import { toJobLog } from './run-job.ts';

/** The rows a page of job runs selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function jobLogFilter(p: JobLogPageInput['params']) {
  let q = qb.selectFrom('job_log');
  if (p.jobId !== undefined) q = q.where('job_id', '=', p.jobId);
  if (p.status) q = q.where('status', '=', p.status);
  return whereCreatedBetween(q, 'started_at', p);
}

/** Runs, newest first by default; createdFrom/createdTo bound their start. Job runs have no owner: no data scope. */
export function pageJobLogs(deps: Ports, run: Runner, req: JobLogPageInput) {
  const q = jobLogFilter(req.params);
  const page = pageStatements(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (s) => s.selectAll(),
    sortColumns: { startedAt: 'started_at', durationMs: 'duration_ms' },
    defaultSort: 'startedAt',
    idColumn: 'id',
    map: (r: Selectable<JobLogTable>) => toJobLog(r),
  });
  return run.read({ reads: page.statements, finish: page.finish });
}

/** Deletes the given rows; ids that no longer exist (retention may have removed them) are skipped. */
export function deleteJobLogs(run: Runner, ids: number[]): Promise<number> {
  return run.write({ batch: [qb.deleteFrom('job_log').where('id', 'in', idList(ids)).returning('id').compile()], finish: ([gone]) => gone?.rows.length ?? 0 });
}

/** Deletes every row: counted in the same batch (no RETURNING of a million ids). */
export function clearJobLogs(run: Runner): Promise<number> {
  return run.write(countedDelete(qb.selectFrom('job_log').select((eb) => eb.fn.countAll<number>().as('n')), qb.deleteFrom('job_log')));
}
