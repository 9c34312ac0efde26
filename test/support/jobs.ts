import type { BackupArchives } from '../../src/core/ports.ts';
import type { AnyTestApp } from './app.ts';

/**
 * Backup archives that make nothing and, when gated, hold every create until `release()`: a backup
 * job run that lasts as long as a test needs (the claim is held meanwhile).
 */
export function fakeArchives(opts: { gated?: boolean } = {}) {
  let release!: () => void;
  const gate = opts.gated ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  let signal!: () => void;
  const started = new Promise<void>((r) => (signal = r));
  let creates = 0;
  const archives: BackupArchives = {
    async create(_name, createdAt) {
      creates++;
      signal();
      await gate;
      return { size: 1, sha256: '0'.repeat(64), manifest: { format: 'edge-admin-backup', formatVersion: 1, createdAt, migrations: [], rowCounts: {}, members: [] } };
    },
    open: async () => null,
    remove: async () => undefined,
  };
  return { archives, started, release: () => release?.(), creates: () => creates };
}

/** Only the job running `handler` stays enabled. */
export const onlyJob = (t: AnyTestApp, handler: string) =>
  t.exec(`UPDATE jobs SET status = CASE WHEN handler = ? THEN 'enabled' ELSE 'disabled' END`, handler);

/** Every job's schedule starts at `iso` and it never ran (so due times after `iso` count). */
export const schedulesFrom = (t: AnyTestApp, iso: string) => t.exec('UPDATE jobs SET schedule_from = ?, last_run_at = NULL, next_run_at = NULL', iso);

export const at = (t: AnyTestApp, iso: string) => t.clock.set(Date.parse(iso));

export const jobLog = (t: AnyTestApp) =>
  t.rows<{ job_name: string; status: string; message: string; started_at: string; duration_ms: number }>(
    'SELECT job_name, status, message, started_at, duration_ms FROM job_log ORDER BY id',
  );

export const jobRow = (t: AnyTestApp, handler: string) =>
  t.row<{ id: number; last_run_at: string | null; next_run_at: string | null; schedule_from: string; claimed_at: string | null; resume: number; version: number; status: string }>(
    'SELECT * FROM jobs WHERE handler = ?',
    handler,
  );
