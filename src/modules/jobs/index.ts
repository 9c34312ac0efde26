// What the app and the entries may use of jobs: the routes, the scheduler's tick, the start-up schedule from configuration.
export { jobLogRoutes, jobRoutes } from './jobs.routes.ts';
export { tick, TICK_GRACE_MS, type TickOptions, type TickReport } from './scheduler.ts';
export { applyScheduleConfig, backupSchedule, failInterruptedRuns } from './schedule-config.ts';
export { JOB_HANDLERS, type JobHandler, type JobHandlers } from './registry.ts';
