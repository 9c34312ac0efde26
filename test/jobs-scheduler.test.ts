import { describe, expect, test } from 'bun:test';
import { cronError } from '../src/core/cron.ts';
import { Budget, RUN_BUDGET } from '../src/modules/maintenance/index.ts';
import { JOB_HANDLERS, tick } from '../src/modules/jobs/index.ts';
import { D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { countingDeps } from './support/counting.ts';
import { at, fakeArchives, jobLog, jobRow, onlyJob, schedulesFrom } from './support/jobs.ts';

// The scheduler's tick over the jobs table, on Bun and on a real D1 (the Workers cron trigger calls
// the same tick: test/worker-entry.test.ts drives it through the Worker's scheduled handler).

const CLEANUPS = ['Expired sessions, captchas and rate limits', 'Log retention (LOG_RETENTION_DAYS)', 'Blob sweep (BLOB_GRACE_HOURS)'];

for (const runtime of RUNTIMES) {
  describe(`scheduler (${runtime})`, () => {
    const app = (env: Record<string, string> = {}) => makeTestApp({ runtime, env });

    test('the seeded jobs are today\'s periodic work: each handler registered, each cron valid', async () => {
      const t = await app();
      const rows = await t.rows<{ handler: string; cron: string; status: string; misfire_policy: string; concurrent: number }>(
        'SELECT handler, cron, status, misfire_policy, concurrent FROM jobs ORDER BY id',
      );
      expect(rows).toEqual([
        { handler: 'expiredCleanup', cron: '*/10 * * * *', status: 'enabled', misfire_policy: 'fire', concurrent: 0 },
        { handler: 'logRetention', cron: '*/10 * * * *', status: 'enabled', misfire_policy: 'fire', concurrent: 0 },
        { handler: 'blobSweep', cron: '*/10 * * * *', status: 'enabled', misfire_policy: 'fire', concurrent: 0 },
        { handler: 'backup', cron: '0 3 * * *', status: 'enabled', misfire_policy: 'fire', concurrent: 0 },
      ]);
      for (const r of rows) {
        expect(JOB_HANDLERS.has(r.handler)).toBe(true);
        expect(cronError(r.cron)).toBeNull();
      }
    }, D1_START_MS);

    test('a due time runs once: a second tick in the same minute runs nothing, the next due time runs again', async () => {
      const t = await app();
      await schedulesFrom(t, '2026-11-22T00:00:00.000Z');
      at(t, '2026-11-22T00:10:20.000Z');
      const first = await tick(t.deps);
      expect(first.ran.map((r) => [r.job, r.status])).toEqual(CLEANUPS.map((j) => [j, 'success']));
      expect(await jobRow(t, 'expiredCleanup')).toMatchObject({ last_run_at: '2026-11-22T00:10:20.000Z', next_run_at: '2026-11-22T00:20:00.000Z', claimed_at: null });
      // Not due: its next due time is stored for the page.
      expect(await jobRow(t, 'backup')).toMatchObject({ last_run_at: null, next_run_at: '2026-11-22T03:00:00.000Z' });
      expect((await tick(t.deps)).ran).toEqual([]);
      at(t, '2026-11-22T00:20:05.000Z');
      expect((await tick(t.deps)).ran.length).toBe(3);
      const log = await jobLog(t);
      expect(log.map((r) => r.status)).toEqual(Array(6).fill('success'));
      expect(log[0]!.started_at).toBe('2026-11-22T00:10:20.000Z');
    }, D1_START_MS);

    test('misfire: `fire` runs once for every missed due time, `skip` drops them and waits for the next one', async () => {
      const t = await app();
      const fake = fakeArchives();
      t.deps.backups = fake.archives;
      const token = await t.login();
      await onlyJob(t, 'backup');
      await schedulesFrom(t, '2026-11-20T12:00:00.000Z');
      at(t, '2026-11-22T10:00:00.000Z'); // 03:00 on the 21st and on the 22nd passed without a run
      const fired = await tick(t.deps);
      expect(fired.ran).toMatchObject([{ status: 'success' }]);
      expect(fired.ran[0]!.message).toStartWith('late: 2 earlier due time(s) missed; archive backup-');
      expect(fake.creates()).toBe(1);
      expect((await tick(t.deps)).ran).toEqual([]);

      const job = (await jobRow(t, 'backup'))!;
      const edit = await t.call('POST', '/app/sysJob/edit', { token, body: { id: job.id, version: job.version, misfirePolicy: 'skip' } });
      expect(edit.status).toBe(200);
      at(t, '2026-11-25T10:00:00.000Z'); // three more missed
      const skipped = await tick(t.deps);
      expect(skipped).toMatchObject({ ran: [], skipped: ['Database backup (server only)'] });
      expect(await jobRow(t, 'backup')).toMatchObject({ schedule_from: '2026-11-25T10:00:00.000Z', next_run_at: '2026-11-26T03:00:00.000Z' });
      expect((await tick(t.deps)).skipped).toEqual([]);
      // On time, `skip` runs like any policy.
      at(t, '2026-11-26T03:00:40.000Z');
      expect((await tick(t.deps)).ran).toMatchObject([{ status: 'success' }]);
      expect(fake.creates()).toBe(2);
    }, D1_START_MS);

    test('only registered handlers run: a row naming anything else runs nothing and each due time is reported', async () => {
      const t = await app();
      await onlyJob(t, 'none');
      // Names a lookup on a plain object would resolve (prototype members), a path, a shell command.
      const foreign = ['toString', 'constructor', '__proto__', 'hasOwnProperty', '../../entry/start.ts', 'rm -rf /'];
      for (const handler of foreign) {
        await t.exec(
          `INSERT INTO jobs (name, handler, cron, status, schedule_from, created_at, updated_at) VALUES (?, ?, '* * * * *', 'enabled', '2026-11-22T00:00:00.000Z', '', '')`,
          `foreign ${handler}`,
          handler,
        );
      }
      at(t, '2026-11-22T00:05:10.000Z');
      const report = await tick(t.deps);
      expect(report.ran.map((r) => r.status)).toEqual(foreign.map(() => 'failure'));
      for (const [i, handler] of foreign.entries()) {
        expect(report.ran[i]!.message).toBe(`the handler "${handler}" is not registered in this version of the service: nothing was run`);
      }
      expect(t.logLines.filter((l) => l.includes('"msg":"job failed"')).length).toBe(foreign.length);
      // Run now refuses them before claiming anything.
      const token = await t.login();
      const id = (await t.row<{ id: number }>(`SELECT id FROM jobs WHERE handler = 'toString'`))!.id;
      const now = await t.call('POST', '/app/sysJob/run', { token, body: { id } });
      expect(now.status).toBe(400);
      expect(now.json.msg).toContain('"toString" is not registered');
      expect((await jobLog(t)).length).toBe(foreign.length);
    }, D1_START_MS);

    test('a stored cron the API would refuse is reported and skipped; the other jobs still run', async () => {
      const t = await app();
      await schedulesFrom(t, '2026-11-22T00:00:00.000Z');
      await t.exec(`UPDATE jobs SET cron = '61 * * * *' WHERE handler = 'logRetention'`);
      at(t, '2026-11-22T00:10:20.000Z');
      const report = await tick(t.deps);
      expect(report.ran.map((r) => r.job)).toEqual([CLEANUPS[0]!, CLEANUPS[2]!]);
      expect(t.logLines.some((l) => l.includes('its cron expression is invalid') && l.includes('minute: 61 is out of range'))).toBe(true);
    }, D1_START_MS);

    test('a disabled job never runs; enabling it restarts its schedule (nothing counts as missed while it was off)', async () => {
      const t = await app();
      const fake = fakeArchives();
      t.deps.backups = fake.archives;
      await onlyJob(t, 'none');
      await schedulesFrom(t, '2026-11-20T00:00:00.000Z');
      at(t, '2026-11-22T10:00:00.000Z');
      expect((await tick(t.deps)).ran).toEqual([]);
      const token = await t.login();
      const id = (await jobRow(t, 'backup'))!.id;
      const on = await t.call('POST', '/app/sysJob/changeStatus', { token, body: { id, status: 'enabled' } });
      expect(on.status).toBe(200);
      expect(on.data).toMatchObject({ status: 'enabled', nextRunAt: '2026-11-23T03:00:00.000Z' });
      expect(await tick(t.deps)).toMatchObject({ ran: [], skipped: [] });
      at(t, '2026-11-23T03:00:30.000Z');
      expect((await tick(t.deps)).ran).toMatchObject([{ status: 'success' }]);
      expect(fake.creates()).toBe(1);
    }, D1_START_MS);

    test('two ticks at once run a due job once; run now answers 409 while it runs, then runs it', async () => {
      const t = await app();
      const fake = fakeArchives({ gated: true });
      t.deps.backups = fake.archives;
      const token = await t.login();
      await onlyJob(t, 'backup');
      await t.exec(`UPDATE jobs SET cron = '* * * * *'`);
      await schedulesFrom(t, '2026-11-22T00:00:00.000Z');
      at(t, '2026-11-22T00:01:10.000Z');
      const ticks = Promise.all([tick(t.deps), tick(t.deps)]);
      await fake.started;
      const id = (await jobRow(t, 'backup'))!.id;
      const busy = await t.call('POST', '/app/sysJob/run', { token, body: { id } });
      expect(busy.status).toBe(409);
      expect(busy.json.msg).toContain('is running');
      expect((await t.call('GET', `/app/sysJob/detail?id=${id}`, { token })).data).toMatchObject({ running: true });
      fake.release();
      const reports = await ticks;
      expect(reports.flatMap((r) => r.ran)).toMatchObject([{ status: 'success' }]);
      expect(fake.creates()).toBe(1);
      expect((await jobRow(t, 'backup'))!.claimed_at).toBeNull();
      const now = await t.call('POST', '/app/sysJob/run', { token, body: { id } });
      expect(now.status).toBe(200);
      expect(now.data).toMatchObject({ jobId: id, status: 'success' });
      expect(fake.creates()).toBe(2);
      expect((await jobLog(t)).length).toBe(2);
    }, D1_START_MS);

    test('two ticks that read the same rows: each due time runs once, also when the first run ends before the second tick claims', async () => {
      const t = await app();
      await schedulesFrom(t, '2026-11-22T00:00:00.000Z');
      at(t, '2026-11-22T00:10:20.000Z');
      const reports = await Promise.all([tick(t.deps), tick(t.deps), tick(t.deps)]);
      expect(reports.flatMap((r) => r.ran.map((x) => x.job)).sort()).toEqual([...CLEANUPS].sort());
      expect((await jobLog(t)).length).toBe(3);
      // The same, made certain: between one tick's read and its first claim, another tick runs whole.
      at(t, '2026-11-22T00:20:20.000Z');
      const atomic = t.deps.atomic;
      let other: Promise<unknown> | undefined;
      const late = { ...t.deps, atomic: async (q: Parameters<typeof atomic>[0]) => ((other ??= tick({ ...t.deps, atomic })), await other, atomic(q)) };
      const stale = await tick(late);
      expect(((await other) as { ran: unknown[] }).ran.length).toBe(3);
      expect(stale.ran).toEqual([]);
      expect((await jobLog(t)).length).toBe(6);
    }, D1_START_MS);

    test('a claim older than its stale limit is taken over and its lost run reported as interrupted; a live one is respected', async () => {
      const t = await app();
      t.deps.backups = fakeArchives().archives;
      const token = await t.login();
      const id = (await jobRow(t, 'backup'))!.id;
      at(t, '2026-11-22T12:00:00.000Z');
      await t.exec(`UPDATE jobs SET claimed_at = '2026-11-22T11:59:00.000Z', claim_id = 'elsewhere' WHERE id = ?`, id);
      expect((await t.call('POST', '/app/sysJob/run', { token, body: { id } })).status).toBe(409);
      await t.exec(`UPDATE jobs SET claimed_at = '2026-11-22T05:00:00.000Z', claim_id = 'dead' WHERE id = ?`, id);
      const run = await t.call('POST', '/app/sysJob/run', { token, body: { id } });
      expect(run.status).toBe(200);
      const log = await jobLog(t);
      expect(log.map((r) => [r.status, r.started_at])).toEqual([
        ['failure', '2026-11-22T05:00:00.000Z'],
        ['success', '2026-11-22T12:00:00.000Z'],
      ]);
      expect(log[0]!.message).toStartWith('interrupted: the run did not report its end within 360 minutes');
      expect(log[0]!.duration_ms).toBe(7 * 3_600_000);
      expect(await jobRow(t, 'backup')).toMatchObject({ claimed_at: null, last_run_at: '2026-11-22T12:00:00.000Z' });
    }, D1_START_MS);

    test('a run stopped by the budget resumes at the next tick, whatever the cron, until its work is done', async () => {
      const t = await app({ LOG_RETENTION_DAYS: '30' });
      await onlyJob(t, 'logRetention');
      await t.exec(
        `INSERT INTO login_log (login_name, ip, status, msg, created_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) SELECT 'x' || i, '10.0.0.1', 'failure', 'old', '2026-01-01T00:00:00.000Z' FROM n`,
      );
      await schedulesFrom(t, '2026-11-22T00:00:00.000Z');
      at(t, '2026-11-22T00:10:20.000Z');
      // 1 for the tick's read, 2 for the claim and the log row, 3 chunks: 500 + 500 + 200 rows of
      // the login log, none left for the operation and job logs.
      const first = await tick(t.deps, { budget: new Budget(6) });
      expect(first).toMatchObject({ more: true, ran: [{ status: 'success' }] });
      expect(first.ran[0]!.message).toBe('loginLog 1200, opLog 0, jobLog 0; work left: continues at the next tick');
      expect(await jobRow(t, 'logRetention')).toMatchObject({ resume: 1 });
      t.clock.advance(5_000); // the server's follow-up tick, not a due time
      const next = await tick(t.deps, { budget: new Budget(6) });
      expect(next).toMatchObject({ more: false, ran: [{ status: 'success', message: 'continued; loginLog 0, opLog 0, jobLog 0' }] });
      expect(await t.count('login_log')).toBe(0);
      expect(await jobRow(t, 'logRetention')).toMatchObject({ resume: 0 });
      expect((await tick(t.deps)).ran).toEqual([]);
    }, D1_START_MS);
  });
}

describe('scheduler bounds (Bun)', () => {
  test("a tick with every job due and a backlog makes no more statements than its budget, its own reads, claims and log rows included", async () => {
    const t = await makeTestApp({ env: { LOG_RETENTION_DAYS: '30' } });
    t.sqlite.run(
      `INSERT INTO login_log (login_name, ip, status, msg, created_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000) SELECT 'x' || i, '10.0.0.1', 'failure', 'old', '2026-01-01T00:00:00.000Z' FROM n`,
    );
    t.deps.backups = fakeArchives().archives;
    await schedulesFrom(t, '2026-11-20T00:00:00.000Z');
    at(t, '2026-11-22T03:00:20.000Z');
    for (const limit of [20, RUN_BUDGET]) {
      const counting = countingDeps(t.deps);
      const report = await tick(counting.deps, { budget: new Budget(limit) });
      expect(counting.calls()).toBeLessThanOrEqual(limit);
      if (limit === 20) {
        // expiredCleanup (3 sweeps), then the log's chunks until the budget ends: the later jobs wait.
        expect(report).toMatchObject({ more: true, ran: [{ job: CLEANUPS[0] }, { job: CLEANUPS[1] }] });
        expect(counting.calls()).toBeGreaterThan(15);
      } else {
        // The rest of the backlog, the later jobs, and the backup (its archive calls are not statements).
        expect(report.more).toBe(false);
        expect(report.ran.map((r) => r.status)).toEqual(['success', 'success', 'success']);
      }
    }
    expect(t.count('login_log')).toBe(0);
  });

  test('two connections to one database file (two processes): a due job runs once', async () => {
    const { scratchDir } = await import('./support/tmp-root.ts');
    const path = `${scratchDir('jobs-db')}/admin.db`;
    const a = await makeTestApp({ databasePath: path });
    const b = await makeTestApp({ databasePath: path });
    const fake = fakeArchives({ gated: true });
    a.deps.backups = fake.archives;
    b.deps.backups = fake.archives;
    await onlyJob(a, 'backup');
    await schedulesFrom(a, '2026-11-21T00:00:00.000Z');
    for (const t of [a, b]) at(t, '2026-11-22T03:00:30.000Z');
    const ticks = Promise.all([tick(a.deps), tick(b.deps)]);
    await fake.started;
    fake.release();
    const reports = await ticks;
    expect(reports.flatMap((r) => r.ran).length).toBe(1);
    expect(fake.creates()).toBe(1);
    expect((await jobLog(b)).length).toBe(1);
  });
});
