import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { jsonLogger } from '../src/core/log.ts';
import { startJobTimer } from '../src/entry/job-timer.ts';
import { applyScheduleConfig, backupSchedule, failInterruptedRuns, type TickReport } from '../src/modules/jobs/index.ts';
import { makeTestApp } from './support/app.ts';
import { jobLog, jobRow } from './support/jobs.ts';
import { startServer, stopServer } from './support/server-process.ts';
import { scratchDir } from './support/tmp-root.ts';

// The server's side of the scheduler: BACKUP_EVERY_HOURS as the backup job's default schedule,
// runs a stop interrupted, the minute timer, and a real start that ticks.

describe('BACKUP_EVERY_HOURS as the backup job\'s schedule', () => {
  test.each([
    [0, '0 3 * * *', 'disabled', true],
    [1, '0 * * * *', 'enabled', true],
    [6, '0 */6 * * *', 'enabled', true],
    [5, '0 */5 * * *', 'enabled', false],
    [24, '0 3 * * *', 'enabled', true],
    [48, '0 3 */2 * *', 'enabled', false],
    [36, '0 3 */2 * *', 'enabled', false],
    [24 * 30, '0 3 1 * *', 'enabled', false],
  ])('%p hours → %p (%s, exact: %p)', (hours, cron, status, exact) => {
    expect(backupSchedule(hours)).toEqual({ cron, status: status as 'enabled' | 'disabled', exact });
  });

  test('applied at start while the job was never changed through the API; from the first API change on, the API wins', async () => {
    const t = await makeTestApp({ env: { BACKUP_EVERY_HOURS: '6' } });
    expect(await applyScheduleConfig(t.deps)).toMatchObject({ applied: true, cron: '0 */6 * * *' });
    expect(await jobRow(t, 'backup')).toMatchObject({ status: 'enabled', version: 1, next_run_at: '2026-11-22T06:00:00.000Z' });
    expect((await applyScheduleConfig(t.deps)).applied).toBe(false); // already so
    t.deps.config = { ...t.deps.config, BACKUP_EVERY_HOURS: 0 };
    expect((await applyScheduleConfig(t.deps)).applied).toBe(true);
    expect(await jobRow(t, 'backup')).toMatchObject({ status: 'disabled', next_run_at: null, version: 1 });
    const token = await t.login();
    const job = (await jobRow(t, 'backup'))!;
    expect((await t.call('POST', '/app/sysJob/edit', { token, body: { id: job.id, version: 1, cron: '30 1 * * *', status: 'enabled' } })).status).toBe(200);
    t.deps.config = { ...t.deps.config, BACKUP_EVERY_HOURS: 12 };
    expect((await applyScheduleConfig(t.deps)).applied).toBe(false);
    expect(await t.row(`SELECT cron, status FROM jobs WHERE handler = 'backup'`)).toEqual({ cron: '30 1 * * *', status: 'enabled' });
  });
});

test('at start, runs the previous process left unfinished are reported as interrupted and released', async () => {
  const t = await makeTestApp();
  t.clock.set(Date.parse('2026-11-22T10:00:00.000Z'));
  await t.exec(`UPDATE jobs SET claimed_at = '2026-11-22T09:58:00.000Z', claim_id = 'gone' WHERE handler IN ('backup', 'blobSweep')`);
  expect(await failInterruptedRuns(t.deps)).toBe(2);
  expect((await jobLog(t)).map((r) => [r.job_name, r.status, r.message, r.duration_ms])).toEqual([
    ['Blob sweep (BLOB_GRACE_HOURS)', 'failure', 'interrupted: the server stopped while it ran', 120_000],
    ['Database backup (server only)', 'failure', 'interrupted: the server stopped while it ran', 120_000],
  ]);
  expect(await t.count('jobs WHERE claimed_at IS NOT NULL')).toBe(0);
  expect(await failInterruptedRuns(t.deps)).toBe(0);
});

test('the minute timer: a tick at once, another soon after one that left work, none after stop', async () => {
  const reports: TickReport[] = [
    { ran: [], skipped: [], more: true },
    { ran: [], skipped: [], more: false },
  ];
  let ticks = 0;
  const lines: string[] = [];
  const timer = startJobTimer(async () => reports[Math.min(ticks++, 1)]!, jsonLogger('debug', (l) => lines.push(l)), { followUpMs: 30, now: () => 0 });
  expect(ticks).toBe(1);
  await Bun.sleep(120);
  expect(ticks).toBe(2); // the follow-up; the next minute is a minute away
  timer.stop();
  const failing = startJobTimer(() => Promise.reject(new Error('database is locked')), jsonLogger('debug', (l) => lines.push(l)), { now: () => 0 });
  await Bun.sleep(10);
  failing.stop();
  expect(lines.some((l) => l.includes('scheduler tick failed') && l.includes('database is locked'))).toBe(true);
});

const children: ChildProcess[] = [];
afterAll(() => children.forEach((p) => p.kill('SIGKILL')));

test('a real server start applies BACKUP_EVERY_HOURS and ticks at once (nextRunAt stored for every enabled job)', async () => {
  const dir = scratchDir('jobs-start');
  const env = { DATABASE_PATH: join(dir, 'admin.db'), FILES_DIR: join(dir, 'files'), BACKUP_DIR: join(dir, 'backups'), ADMIN_PASSWORD: 'Entry-Test-Pass-1', BACKUP_EVERY_HOURS: '12' };
  const s = await startServer(env, children);
  const db = new Database(env.DATABASE_PATH, { readonly: true });
  let rows: { handler: string; cron: string; next_run_at: string | null }[] = [];
  for (let i = 0; i < 50; i++) {
    rows = db.query('SELECT handler, cron, next_run_at FROM jobs ORDER BY id').all() as typeof rows;
    if (rows.every((r) => r.next_run_at)) break;
    await Bun.sleep(100);
  }
  db.close();
  expect(rows.map((r) => [r.handler, r.cron])).toEqual([
    ['expiredCleanup', '*/10 * * * *'],
    ['logRetention', '*/10 * * * *'],
    ['blobSweep', '*/10 * * * *'],
    ['backup', '0 */12 * * *'],
  ]);
  expect(rows.every((r) => r.next_run_at !== null && Date.parse(r.next_run_at) > Date.now() - 60_000)).toBe(true);
  expect(s.output()).toContain('backup job scheduled from BACKUP_EVERY_HOURS');
  expect(await stopServer(s)).toBe(0);
  // A run the stop cut short (as a kill would leave it): the next start reports and releases it.
  const file = new Database(env.DATABASE_PATH);
  file.run(`UPDATE jobs SET claimed_at = ?, claim_id = 'killed' WHERE handler = 'blobSweep'`, [new Date(Date.now() - 60_000).toISOString()]);
  file.close();
  const again = await startServer(env, children);
  expect(await stopServer(again)).toBe(0);
  const after = new Database(env.DATABASE_PATH, { readonly: true });
  expect(after.query(`SELECT job_name, status, message FROM job_log WHERE message LIKE 'interrupted%'`).all()).toEqual([
    { job_name: 'Blob sweep (BLOB_GRACE_HOURS)', status: 'failure', message: 'interrupted: the server stopped while it ran' },
  ]);
  expect(after.query(`SELECT claimed_at FROM jobs WHERE handler = 'blobSweep'`).get()).toEqual({ claimed_at: null });
  after.close();
}, 60_000);
