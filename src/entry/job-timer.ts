import type { Logger } from '../core/ports.ts';
import { errorFields } from '../core/log.ts';
import type { TickReport } from '../modules/jobs/index.ts';

/** After a tick that left work (a bounded run stopped at its budget), the next one comes this soon. */
export const FOLLOW_UP_MS = 5_000;
/** Ticks come this long after each whole minute (cron due times are whole minutes). */
const PAST_THE_MINUTE_MS = 1_000;

/**
 * The server's scheduler clock (the Workers cron trigger is the other): a tick at once, then one a
 * second past every minute, and one FOLLOW_UP_MS after a tick that left work. Ticks of one process
 * may overlap (a backup that takes minutes does not hold the cleanups up): each run is claimed in the
 * database, so a job never runs twice at once, whichever process or tick asks.
 */
export function startJobTimer(runTick: () => Promise<TickReport>, log: Logger, opts: { now?: () => number; followUpMs?: number } = {}) {
  const now = opts.now ?? Date.now;
  const followUpMs = opts.followUpMs ?? FOLLOW_UP_MS;
  let minute: ReturnType<typeof setTimeout> | undefined;
  let soon: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const unref = (t: ReturnType<typeof setTimeout>) => (t as { unref?: () => void }).unref?.();

  const fire = () =>
    runTick().then(
      (report) => {
        if (report.ran.length || report.skipped.length) log.log('info', 'jobs', { ran: report.ran, skipped: report.skipped, more: report.more });
        if (report.more && !stopped) {
          clearTimeout(soon);
          unref((soon = setTimeout(fire, followUpMs)));
        }
      },
      (err: unknown) => log.log('error', 'scheduler tick failed', errorFields(err)),
    );
  const everyMinute = () => {
    if (stopped) return;
    unref((minute = setTimeout(() => {
      everyMinute();
      void fire();
    }, 60_000 - (now() % 60_000) + PAST_THE_MINUTE_MS)));
  };
  void fire();
  everyMinute();
  return {
    stop() {
      stopped = true;
      clearTimeout(minute);
      clearTimeout(soon);
    },
  };
}
