// What the app and the entries may use of jobs: the routes, the scheduler's tick, the start-up schedule from configuration.
export { jobLogRoutes, jobRoutes } from './jobs.routes.ts';
export { tick, TICK_GRACE_MS, type TickOptions, type TickReport } from './scheduler.ts';
export { applyScheduleConfig, backupSchedule, failInterruptedRuns } from './schedule-config.ts';
export { JOB_HANDLERS, type JobHandler, type JobHandlers } from './registry.ts';
// The RuoYi dialect (compat/ruoyi) maps RuoYi's job and job-log pages onto these services.
export { changeJobStatus, editJob, jobDetail, pageJobs, runJobNow } from './jobs.service.ts';
export { clearJobLogs, deleteJobLogs, pageJobLogs } from './job-log.service.ts';
export { JobEditRequest, JobLogPageRequest, JobPageRequest } from './jobs.schemas.ts';
export type { Job, JobLog } from './jobs.schemas.ts';
export { exportJobLogs, exportJobs } from './jobs.routes.ts';
