// What the entries and other modules may use of maintenance: the scheduled cleanup and its budget.
export { cleanup } from './cleanup.ts';
export { Budget, DELETE_CHUNK, RUN_BUDGET } from './budget.ts';
