import type { Context } from 'hono';
import { createRoute } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { DeletedCount } from '../../core/schemas.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { clearJobLogs, deleteJobLogs, pageJobLogs } from './job-log.service.ts';
import {
  JobEditRequest,
  JobLogDeleteRequest,
  JobLogPage,
  JobLogPageRequest,
  JobLogSchema,
  JobPage,
  JobPageRequest,
  JobRunRequest,
  JobSchema,
  JobStatusRequest,
} from './jobs.schemas.ts';
import { changeJobStatus, editJob, jobDetail, pageJobs, runJobNow } from './jobs.service.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { JobLogPageParams, JobPageParams } from './jobs.schemas.ts';
import { jobFilter } from './jobs.service.ts';
import { jobLogFilter } from './job-log.service.ts';

const tags = ['Scheduled jobs'];
const base = '/app/sysJob';
const notFound = { 404: errorResponse('No such job') };
const REGISTRY = 'A job runs code registered in the service under its `handler` name, never a call target stored in the database; the table holds when and how.';

const pageRoute = guarded(
  'sys:job:page',
  createRoute({
    method: 'post',
    path: `${base}/page`,
    tags,
    summary: 'The scheduled jobs',
    description: REGISTRY,
    request: { body: jsonBody(JobPageRequest) },
    responses: okResponse('A page of jobs', JobPage),
  }),
);

const detailRoute = guarded(
  'sys:job:detail',
  createRoute({
    method: 'get',
    path: `${base}/detail`,
    tags,
    summary: 'One job',
    request: { query: idQuerySchema },
    responses: { ...okResponse('The job', JobSchema), ...notFound },
  }),
);

const editRoute = guarded(
  'sys:job:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Change when and how a job runs (partial; `version` must match, else 409; a bad cron is 400 naming the field)',
    request: { body: jsonBody(JobEditRequest) },
    responses: { ...okResponse('The updated job', JobSchema), ...notFound, 409: errorResponse('The version is stale') },
  }),
  { oplog: true },
);

const statusRoute = guarded(
  'sys:job:changeStatus',
  createRoute({
    method: 'post',
    path: `${base}/changeStatus`,
    tags,
    summary: 'Enable or disable a job (enabling counts nothing as missed while it was off)',
    request: { body: jsonBody(JobStatusRequest) },
    responses: { ...okResponse('The updated job', JobSchema), ...notFound },
  }),
  { oplog: true },
);

const runRoute = guarded(
  'sys:job:run',
  createRoute({
    method: 'post',
    path: `${base}/run`,
    tags,
    summary: 'Run a job now and wait for it; the answer is the run\'s log row (a failed run is 200 with status `failure`)',
    description: `${REGISTRY} The run is claimed like a scheduled one: while a run of a job that is not concurrent holds it (in any process or isolate), 409.`,
    request: { body: jsonBody(JobRunRequest) },
    responses: {
      ...okResponse('The run', JobLogSchema),
      ...notFound,
      409: errorResponse('A run of this non-concurrent job holds it'),
      501: errorResponse('The job cannot run on this runtime (backups on Workers)'),
    },
  }),
  { oplog: true },
);

const logPageRoute = guarded(
  'sys:jobLog:page',
  createRoute({
    method: 'post',
    path: '/app/sysJobLog/page',
    tags,
    summary: 'Runs of the scheduled jobs, newest first by default',
    request: { body: jsonBody(JobLogPageRequest) },
    responses: okResponse('A page of runs', JobLogPage),
  }),
);

const logDeleteRoute = guarded(
  'sys:jobLog:delete',
  createRoute({
    method: 'post',
    path: '/app/sysJobLog/delete',
    tags,
    summary: 'Delete job-log rows (ids that do not exist are skipped)',
    request: { body: jsonBody(JobLogDeleteRequest) },
    responses: okResponse('Rows deleted', DeletedCount),
  }),
  { oplog: true },
);

const logClearRoute = guarded(
  'sys:jobLog:clear',
  createRoute({
    method: 'post',
    path: '/app/sysJobLog/clear',
    tags,
    summary: 'Delete every job-log row (the clear itself is recorded in the operation log)',
    responses: okResponse('Rows deleted', DeletedCount),
  }),
  { oplog: true },
);

const exportJobsRoute = exportRoute('sys:job:export', base, tags, 'jobs', exportRequestSchema('JobExportRequest', JobPageParams));
const exportJobLogRoute = exportRoute('sys:jobLog:export', '/app/sysJobLog', tags, 'job runs', exportRequestSchema('JobLogExportRequest', JobLogPageParams));

/** The jobs export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportJobs(c: Context, params: Parameters<typeof jobFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'jobs',
    rows: jobFilter(params),
    select: (q) => q.selectAll('jobs'),
    keys: ['jobs.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Name', value: (r) => r.name },
      { header: 'Handler', value: (r) => r.handler },
      { header: 'Cron', value: (r) => r.cron },
      { header: 'Status', value: (r) => r.status, dict: 'sys_job_status' },
      { header: 'Misfire policy', value: (r) => r.misfire_policy },
      { header: 'Concurrent', value: (r) => (r.concurrent === 1 ? 'true' : 'false'), dict: 'sys_yes_no' },
      { header: 'Last run at', value: (r) => when(r.last_run_at) },
      { header: 'Next run at', value: (r) => when(r.next_run_at) },
    ],
  }, format);
}

/** The job runs export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportJobLogs(c: Context, params: Parameters<typeof jobLogFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'job-log',
    rows: jobLogFilter(params),
    select: (q) => q.selectAll('job_log'),
    keys: ['job_log.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Job ID', value: (r) => r.job_id },
      { header: 'Job name', value: (r) => r.job_name },
      { header: 'Status', value: (r) => r.status, dict: 'sys_common_status' },
      { header: 'Message', value: (r) => r.message },
      { header: 'Started at', value: (r) => when(r.started_at) },
      { header: 'Finished at', value: (r) => when(r.finished_at) },
      { header: 'Duration (ms)', value: (r) => r.duration_ms },
    ],
  }, format);
}

export const jobRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageJobs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await jobDetail(c.get('deps'), c.get('run'), c.req.valid('query').id)))
  .openapi(editRoute, async (c) => ok(c, await editJob(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(statusRoute, async (c) => ok(c, await changeJobStatus(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(runRoute, async (c) => ok(c, await runJobNow(c.get('deps'), c.get('run'), c.req.valid('json').id)))
  .openapi(exportJobsRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportJobs(c, params, format)) as never;
  });

export const jobLogRoutes = createRouter()
  .openapi(logPageRoute, async (c) => ok(c, await pageJobLogs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(logDeleteRoute, async (c) => ok(c, { deleted: await deleteJobLogs(c.get('run'), c.req.valid('json').ids) }))
  .openapi(logClearRoute, async (c) => ok(c, { deleted: await clearJobLogs(c.get('run')) }))
  .openapi(exportJobLogRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportJobLogs(c, params, format)) as never;
  });
