import type { Deps } from '../../deps';
import { isoNow } from '../../core/time';
import { cleanupBlobs } from '../files/blob-refs';

const DAY = 86_400_000;

/**
 * Periodic housekeeping, run by the Bun entry on an interval and by the Workers cron trigger:
 * expired captchas, sessions past expiry (or revoked a day ago), stale rate-limit windows, and
 * log rows older than LOG_RETENTION_DAYS (0 keeps them forever), and orphaned or unreferenced blobs.
 */
export async function cleanup(deps: Deps) {
  const { db, clock, config } = deps;
  const now = isoNow(clock);
  const counts: Record<string, number> = {};
  const n = (r: { numDeletedRows: bigint }[]) => Number(r[0]?.numDeletedRows ?? 0n);
  counts.captchas = n(await db.deleteFrom('captchas').where('expires_at', '<=', now).execute());
  counts.sessions = n(
    await db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('revoked_at', '<=', isoNow(clock, -DAY))]))
      .execute(),
  );
  counts.rateLimits = n(
    await db
      .deleteFrom('rate_limits')
      .where('window_start', '<=', isoNow(clock, -DAY))
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .execute(),
  );
  if (config.LOG_RETENTION_DAYS > 0) {
    const cutoff = isoNow(clock, -config.LOG_RETENTION_DAYS * DAY);
    counts.loginLog = n(await db.deleteFrom('login_log').where('created_at', '<', cutoff).execute());
    counts.opLog = n(await db.deleteFrom('op_log').where('created_at', '<', cutoff).execute());
  }
  Object.assign(counts, await cleanupBlobs(deps));
  return counts;
}
