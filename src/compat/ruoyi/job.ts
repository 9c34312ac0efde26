import { Hono, type Context } from 'hono';
import { AppError, badRequest } from '../../core/errors.ts';
import {
  changeJobStatus,
  clearJobLogs,
  deleteJobLogs,
  editJob,
  jobDetail,
  JobEditRequest,
  JobLogPageRequest,
  JobPageRequest,
  pageJobLogs,
  pageJobs,
  runJobNow,
  type Job,
  type JobLog,
} from '../../modules/jobs/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { body } from './user.ts';
import { dateRangeOf, defined, dictFilter, fromRuoyiStatus, idListOf, idOf, pageOf, ruoyiTime, statusFilter, text, toRuoyiStatus } from './values.ts';

/**
 * 定时任务 and 调度日志 (RuoYi's api/monitor/job.js and jobLog.js) on our jobs (modules/jobs).
 * Ours are the service's own periodic work, registered in code: RuoYi's `invokeTarget` is our
 * handler (read only), its group is always 'SYSTEM', and adding or deleting a job is a documented
 * 501 (no arbitrary call target is ever stored). Schedules are Quartz expressions in RuoYi
 * (seconds first, `?`, days of the week 1 = SUN) and 5 fields here: converted both ways below.
 */

export const JOB_GROUP = 'SYSTEM';
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
/** The numbers of a day-of-week field that are days, not steps (those follow a '/'). */
const DAY_NUMBERS = /(^|[,-])(\d+)/g;

/** Our 5-field expression → Quartz's 6 fields (second 0; `?` in the day field left open; days by name). */
export function quartzOf(cron: string): string {
  const [minute, hour, dom, month, dow] = cron.split(' ') as [string, string, string, string, string];
  const days = dow.replace(DAY_NUMBERS, (_, sep: string, n: string) => sep + (DAYS[Number(n) % 7] ?? n));
  if (days === '*') return `0 ${minute} ${hour} ${dom} ${month} ?`;
  if (dom === '*') return `0 ${minute} ${hour} ? ${month} ${days}`;
  return `0 ${minute} ${hour} ${dom} ${month} ${days}`;
}

/** A Quartz expression (6 or 7 fields; 5 are taken as ours) → ours. What a minute schedule cannot say is a 400. */
export function cronOfQuartz(expr: string): string {
  const parts = expr.trim().split(/\s+/);
  if (parts.length === 5) return parts.join(' ');
  if (parts.length !== 6 && parts.length !== 7) throw badRequest('cronExpression: must have 6 or 7 fields (Quartz: second minute hour day month weekday [year])');
  const [second, minute, hour, dom, month, dow, year] = parts as [string, string, string, string, string, string, string | undefined];
  if (second !== '0') throw badRequest('cronExpression: the second must be 0 (jobs here are scheduled by the minute)');
  if (year !== undefined && year !== '*') throw badRequest('cronExpression: the year must be * (jobs here repeat every year)');
  const days = dow === '?' ? '*' : fromStart(dow, 'SAT').replace(DAY_NUMBERS, (_, sep: string, n: string) => {
    const day = DAYS[Number(n) - 1];
    if (!day) throw badRequest(`cronExpression: weekday ${n}: Quartz numbers the days 1 (SUN) to 7 (SAT)`);
    return sep + day;
  });
  return `${fromStart(minute, '59')} ${fromStart(hour, '23')} ${dom === '?' ? '*' : fromStart(dom, '31')} ${fromStart(month, '12')} ${days}`;
}

/** Quartz's `a/n` (from a, every n: what RuoYi's cron builder writes, e.g. `0/5`) → ours, `a-last/n`. */
const fromStart = (field: string, last: string) =>
  field
    .split(',')
    .map((item) => item.replace(/^([0-9A-Za-z]+)\/(\d+)$/, `$1-${last}/$2`))
    .join(',');

/** RuoYi's misfire policies: '2' run once ↔ fire, '3' do nothing ↔ skip ('1', run every missed time, is not offered). */
const MISFIRE_TO_RUOYI = { fire: '2', skip: '3' } as const;
function misfireOf(v: unknown): Job['misfirePolicy'] | undefined {
  if (v === undefined || v === '' || v === null) return undefined;
  if (v === '2' || v === 2) return 'fire';
  if (v === '3' || v === 3) return 'skip';
  throw badRequest("misfirePolicy: '2' (run once for what was missed) or '3' (skip what was missed); running every missed time is not offered");
}
function concurrentOf(v: unknown): boolean | undefined {
  if (v === undefined || v === '' || v === null) return undefined;
  if (v === '0' || v === 0) return true;
  if (v === '1' || v === 1) return false;
  throw badRequest("concurrent: '0' (allowed) or '1' (forbidden)");
}

export function ruoyiJob(j: Job) {
  return {
    jobId: j.id,
    jobName: j.name,
    jobGroup: JOB_GROUP,
    invokeTarget: j.handler,
    cronExpression: quartzOf(j.cron),
    misfirePolicy: MISFIRE_TO_RUOYI[j.misfirePolicy],
    concurrent: j.concurrent ? '0' : '1',
    status: toRuoyiStatus(j.status),
    nextValidTime: ruoyiTime(j.nextRunAt),
    createTime: ruoyiTime(j.createdAt),
    updateTime: ruoyiTime(j.updatedAt),
    remark: '',
    version: j.version,
  };
}

export function ruoyiJobLog(l: JobLog, handler = '') {
  return {
    jobLogId: l.id,
    jobName: l.jobName,
    jobGroup: JOB_GROUP,
    invokeTarget: handler,
    jobMessage: l.message,
    status: l.status === 'success' ? '0' : '1',
    exceptionInfo: l.status === 'failure' ? l.message : '',
    startTime: ruoyiTime(l.startedAt),
    endTime: ruoyiTime(l.finishedAt),
    createTime: ruoyiTime(l.startedAt),
  };
}

/** A group other than ours selects nothing. */
const otherGroup = (g: string | undefined) => g !== undefined && g !== JOB_GROUP;

/** The job page's filter (its list and its export; the group is checked apart: otherGroup). */
export const jobParams = (q: Record<string, string>) => defined({ name: text(q.jobName), status: statusFilter(q.status) });

/**
 * The job log page's filter (its list and its export), or undefined when it selects nothing (a
 * group not ours, a job name no job has; the caller judged all the same). RuoYi filters by the
 * job's name (its log page looks the job up first), ours by its id: one read to find it.
 */
export async function jobLogParams(c: Context, q: Record<string, string>) {
  const run = c.get('run');
  const status = dictFilter('sys_common_status', q.status, 'status');
  if (otherGroup(text(q.jobGroup))) {
    await run.caller();
    return undefined;
  }
  let job: Job | undefined;
  const name = text(q.jobName);
  if (name) {
    const jobs = await pageJobs(c.get('deps'), run, parsed(JobPageRequest, { pageNo: 1, pageSize: 100, params: { name } }));
    const wanted = name.trim().toLowerCase();
    job = jobs.records.find((j) => j.name.toLowerCase() === wanted) ?? jobs.records.find((j) => j.handler.toLowerCase() === wanted);
    if (!job) return undefined;
  }
  return { job, params: defined({ jobId: job?.id, status, ...dateRangeOf(q) }) };
}

export const otherJobGroup = (q: Record<string, string>) => otherGroup(text(q.jobGroup));

const notOffered = (what: string) => async (c: Context) => {
  await c.get('run').caller();
  throw new AppError('NOT_IMPLEMENTED', `${what}: the jobs are the service's own periodic work, registered in its code (their schedule and status can be edited here)`);
};

export const jobRoutes = new Hono()
  .get('/monitor/job/list', ...read('sys:job:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(JobPageRequest, { pageNo, pageSize, sortField: 'id', sortOrder: 'asc', params: jobParams(q) });
    if (otherGroup(text(q.jobGroup))) {
      await c.get('run').caller();
      return table(c, [], 0);
    }
    const page = await pageJobs(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiJob), page.total);
  })
  .get('/monitor/job/:id{[0-9]+}', ...read('sys:job:detail'), async (c) => ajaxData(c, ruoyiJob(await jobDetail(c.get('deps'), c.get('run'), idOf(c.req.param('id'), 'jobId')))))
  .post('/monitor/job', ...read(null), notOffered('Adding a job is not offered'))
  .delete('/monitor/job/:ids{[0-9,]+}', ...read(null), notOffered('Deleting a job is not offered'))
  .put('/monitor/job/changeStatus', ...write('sys:job:changeStatus', 'sysJob', 'changeStatus'), async (c) => {
    const b = await body(c);
    const input = { id: idOf(b.jobId, 'jobId'), status: fromRuoyiStatus(b.status) };
    c.set('opParams', input);
    await changeJobStatus(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/monitor/job/run', ...write('sys:job:run', 'sysJob', 'run'), async (c) => {
    const b = await body(c);
    const id = idOf(b.jobId, 'jobId');
    c.set('opParams', { id });
    const log = await runJobNow(c.get('deps'), c.get('run'), id);
    // A run that failed is a 200 of ours whose log row says why; RuoYi would say "执行成功".
    if (log.status === 'failure') return c.json({ code: 500, msg: `The run failed: ${log.message}` }, 200);
    return ajax(c, {}, log.message || undefined);
  })
  .put('/monitor/job', ...write('sys:job:edit', 'sysJob', 'edit'), async (c) => {
    // RuoYi sends the whole job back: name, group and target are ours to keep (refused when
    // changed), the schedule, policies and status go into our edit (status: sys:job:changeStatus).
    const b = await body(c);
    const run = c.get('run');
    const id = idOf(b.jobId, 'jobId');
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the job and try again');
    const current = await jobDetail(c.get('deps'), run, id);
    if (b.jobName !== undefined && text(b.jobName) !== current.name) throw badRequest("jobName: the names of the service's jobs cannot be changed");
    if (b.invokeTarget !== undefined && text(b.invokeTarget) !== current.handler) throw badRequest("invokeTarget: a job runs the code it is registered with; it cannot be changed");
    if (otherGroup(text(b.jobGroup))) throw badRequest(`jobGroup: the service's jobs are all in ${JOB_GROUP}`);
    const status = b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status);
    // The expression as handed out, echoed unchanged, is no change (its text may differ from ours: SUN for 0).
    const sent = text(b.cronExpression)?.trim().split(/\s+/).join(' ');
    const cron = sent === undefined || sent === quartzOf(current.cron) ? undefined : cronOfQuartz(sent);
    const input = parsed(JobEditRequest, {
      id,
      version: b.version,
      ...defined({
        cron: cron === current.cron ? undefined : cron,
        status: status === current.status ? undefined : status,
        misfirePolicy: misfireOf(b.misfirePolicy),
        concurrent: concurrentOf(b.concurrent),
      }),
    });
    c.set('opParams', input);
    await editJob(c.get('deps'), run, input);
    return ajax(c);
  })
  // ---- 调度日志 ----
  .get('/monitor/jobLog/list', ...read('sys:jobLog:page'), async (c) => {
    const q = c.req.query();
    const deps = c.get('deps');
    const run = c.get('run');
    const { pageNo, pageSize } = pageOf(q, deps.config.PAGE_SIZE_MAX);
    const filter = await jobLogParams(c, q);
    if (!filter) return table(c, [], 0);
    const { job, params } = filter;
    const req = parsed(JobLogPageRequest, { pageNo, pageSize, params });
    const page = await pageJobLogs(deps, run, req);
    return table(c, page.records.map((l) => ruoyiJobLog(l, job?.handler)), page.total);
  })
  .delete('/monitor/jobLog/clean', ...write('sys:jobLog:clear', 'sysJobLog', 'clear'), async (c) => {
    await clearJobLogs(c.get('run'));
    return ajax(c);
  })
  .delete('/monitor/jobLog/:ids{[0-9,]+}', ...write('sys:jobLog:delete', 'sysJobLog', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'jobLogIds');
    c.set('opParams', { ids });
    await deleteJobLogs(c.get('run'), ids);
    return ajax(c);
  });
