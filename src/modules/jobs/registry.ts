import { AppError } from '../../core/errors.ts';
import type { Ports } from '../../core/ports.ts';
import type { Runner } from '../../db/runner.ts';
import { archivesOf, scheduledBackup } from '../backups/index.ts';
import { cleanupBlobs } from '../files/index.ts';
import { expiredCleanup, logRetention, type Budget, type SweepResult } from '../maintenance/index.ts';

/**
 * The code a job may run, registered here by name. A job row names one of these (its `handler`);
 * nothing else is ever called, whatever the database holds: a name that is not a key of this Map
 * (`constructor`, `toString`, a module path) finds nothing and runs nothing.
 */

/** What a run gets: the deps, a runner with no caller (it runs outside any request), the tick's budget. */
export interface JobContext {
  deps: Ports;
  run: Runner;
  /** Database statements and blob calls the run may still make (maintenance/budget.ts). */
  budget: Budget;
}

export interface JobOutcome {
  /** What the run did, for the job log. */
  message: string;
  /** The run stopped at its budget with work left: the next tick continues it, whatever the cron. */
  more?: boolean;
}

export interface JobHandler {
  /**
   * Why the handler cannot run in this runtime (backups on Workers: the answer sysBackup gives),
   * or null. Run now answers it; a due time is reported with it as a failure.
   */
  unavailable?(deps: Ports): AppError | null;
  /** A claim older than this belongs to a run that died (process killed, isolate evicted): taken over. */
  staleAfterMs: number;
  run(ctx: JobContext): Promise<JobOutcome>;
}

export type JobHandlers = ReadonlyMap<string, JobHandler>;

const MINUTE = 60_000;
/** A Workers cron invocation ends after 15 minutes at most; a bounded cleanup run takes seconds. */
const CLEANUP_STALE_MS = 15 * MINUTE;

/** `captchas 3, sessions 0, …` and whether it continues. */
function describe(r: SweepResult, idle: string): JobOutcome {
  const parts = Object.entries(r.counts).map(([k, n]) => `${k} ${n}`);
  const message = parts.length ? parts.join(', ') : idle;
  return { message: r.more ? `${message}; work left: continues at the next tick` : message, more: r.more };
}

export const JOB_HANDLERS: JobHandlers = new Map<string, JobHandler>([
  [
    'expiredCleanup',
    { staleAfterMs: CLEANUP_STALE_MS, run: async ({ deps, run, budget }) => describe(await expiredCleanup(deps, run, budget), 'nothing expired') },
  ],
  [
    'logRetention',
    {
      staleAfterMs: CLEANUP_STALE_MS,
      run: async ({ deps, run, budget }) =>
        describe(await logRetention(deps, run, budget), 'LOG_RETENTION_DAYS is 0: log rows are kept forever'),
    },
  ],
  ['blobSweep', { staleAfterMs: CLEANUP_STALE_MS, run: async ({ deps, run, budget }) => describe(await cleanupBlobs(deps, run, budget), 'no blob store') }],
  [
    'backup',
    {
      // An archive of a large database takes a while; the backups table itself refuses a second one meanwhile.
      staleAfterMs: 6 * 60 * MINUTE,
      unavailable: (deps) => {
        try {
          archivesOf(deps);
          return null;
        } catch (e) {
          if (e instanceof AppError) return e;
          throw e;
        }
      },
      run: async ({ deps, run }) => {
        const r = await scheduledBackup(deps, run);
        if (r.status !== 200) throw new AppError('INTERNAL', `backup failed: ${r.errorMsg ?? `status ${r.status}`}`);
        return { message: `archive ${r.name} (keeping the newest ${deps.config.BACKUP_KEEP} scheduled)` };
      },
    },
  ],
]);

/** The stale limit of a job's claim (an unknown handler's rows: the cleanup's). */
export const staleAfter = (handlers: JobHandlers, name: string) => handlers.get(name)?.staleAfterMs ?? CLEANUP_STALE_MS;
