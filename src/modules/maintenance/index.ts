// What the entries and other modules may use of maintenance: the housekeeping (whole, and per job) and its budget.
export { cleanup, expiredCleanup, logRetention, type SweepResult } from './cleanup.ts';
export { Budget, DELETE_CHUNK, RUN_BUDGET } from './budget.ts';
