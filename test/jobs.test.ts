import { beforeAll, describe, expect, test } from 'bun:test';
import { beforeBatch, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { at, jobLog, jobRow } from './support/jobs.ts';
import { BAD_IDS, BAD_PAGE_REQUESTS, userWithCodes } from './support/rbac-fixture.ts';
import { expectGuarded, expectScenario } from './support/scenario.ts';

// sysJob and sysJobLog over HTTP, on Bun and on a real D1: the contract's fields and rules, the
// codes, what a refused request leaves (nothing), the op log, and the D1 round trips of each route.

const JOB_FIELDS = ['concurrent', 'createdAt', 'cron', 'handler', 'id', 'lastRunAt', 'misfirePolicy', 'name', 'nextRunAt', 'running', 'status', 'updatedAt', 'version'];
const LOG_FIELDS = ['durationMs', 'finishedAt', 'id', 'jobId', 'jobName', 'message', 'startedAt', 'status'];
const rt = (res: Response) => Number(res.headers.get('server-timing')?.match(/db;dur=[\d.]+;desc="(\d+) rt/)?.[1] ?? NaN);

for (const runtime of RUNTIMES) {
  describe(`sysJob / sysJobLog (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    let nobody: string;
    let editor: string;
    const id = async (handler: string) => (await jobRow(t, handler))!.id;
    const call = (path: string, body?: unknown, token = admin) => t.call(body === undefined && !path.includes('/page') ? 'GET' : 'POST', path, { token, body });
    const post = (path: string, body: unknown = {}, token = admin) => t.call('POST', path, { token, body });

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      at(t, '2026-11-22T00:00:00.000Z');
      admin = await t.login();
      nobody = (await userWithCodes(t, [], 'nobody')).token;
      editor = (await userWithCodes(t, ['sys:job:edit', 'sys:job:detail'], 'jobeditor')).token;
    }, D1_START_MS);

    test('every route: anonymous 401, no code 403 (nothing changed), its code 200', async () => {
      const cleanup = await id('expiredCleanup');
      const ops = [
        { code: 'sys:job:page', method: 'POST' as const, path: '/app/sysJob/page', request: () => ({ body: {} }) },
        { code: 'sys:job:detail', method: 'GET' as const, path: '/app/sysJob/detail', request: () => ({ query: `id=${cleanup}` }) },
        {
          code: 'sys:job:edit',
          method: 'POST' as const,
          path: '/app/sysJob/edit',
          request: async () => ({ body: { id: cleanup, version: (await jobRow(t, 'expiredCleanup'))!.version, misfirePolicy: 'fire' } }),
        },
        { code: 'sys:job:changeStatus', method: 'POST' as const, path: '/app/sysJob/changeStatus', request: () => ({ body: { id: cleanup, status: 'enabled' } }) },
        { code: 'sys:job:run', method: 'POST' as const, path: '/app/sysJob/run', request: () => ({ body: { id: cleanup } }) },
        { code: 'sys:jobLog:page', method: 'POST' as const, path: '/app/sysJobLog/page', request: () => ({ body: {} }) },
        { code: 'sys:jobLog:delete', method: 'POST' as const, path: '/app/sysJobLog/delete', request: () => ({ body: { ids: [999999] } }) },
        { code: 'sys:jobLog:clear', method: 'POST' as const, path: '/app/sysJobLog/clear' },
      ];
      for (const op of ops) {
        const granted = (await userWithCodes(t, [op.code])).token;
        await expectGuarded(t, op, { refused: nobody, granted }, ['jobs', 'job_log']);
      }
    }, 120_000);

    test('page: the seeded jobs with the contract fields; name matches name or handler; status filter; bad requests 400', async () => {
      const all = await post('/app/sysJob/page', { sortField: 'id', sortOrder: 'asc' });
      expect(all.status).toBe(200);
      expect(all.data.records.map((j: any) => j.handler)).toEqual(['expiredCleanup', 'logRetention', 'blobSweep', 'backup']);
      expect(Object.keys(all.data.records[0]).sort()).toEqual(JOB_FIELDS);
      // Before any tick stored one, nextRunAt is the cron's next due time after now.
      expect(all.data.records[3]).toMatchObject({ cron: '0 3 * * *', status: 'enabled', misfirePolicy: 'fire', concurrent: false, running: false });
      expect(all.data.records[3].nextRunAt).toMatch(/T03:00:00\.000Z$/);
      const names = async (params: unknown) => (await post('/app/sysJob/page', { params })).data.records.map((j: any) => j.handler).sort();
      expect(await names({ name: 'backup' })).toEqual(['backup']);
      expect(await names({ name: 'RETENTION' })).toEqual(['logRetention']);
      expect(await names({ name: '%' })).toEqual([]);
      expect(await names({ status: 'disabled' })).toEqual([]);
      for (const [, body] of BAD_PAGE_REQUESTS) expect((await post('/app/sysJob/page', body)).status).toBe(400);
      expect((await post('/app/sysJob/page', { params: { handler: 'backup' } })).status).toBe(400);
    });

    test('detail: one job; unknown 404; a malformed id 400', async () => {
      const r = await call(`/app/sysJob/detail?id=${await id('blobSweep')}`);
      expect(r.data).toMatchObject({ handler: 'blobSweep', cron: '*/10 * * * *', version: 1 });
      expect((await call('/app/sysJob/detail?id=999999')).status).toBe(404);
      expect((await call('/app/sysJob/detail?id=1%20OR%201=1')).status).toBe(400);
    });

    test('edit: a bad cron is 400 naming the field, a stale version 409, an unknown field 400; nothing changes', async () => {
      const job = (await jobRow(t, 'logRetention'))!;
      const refused: [unknown, number, string][] = [
        [{ cron: '61 * * * *' }, 400, 'cron: minute: 61 is out of range 0-59'],
        [{ cron: '* * * *' }, 400, 'cron: expected 5 fields'],
        [{ cron: '0 0 0 * * *' }, 400, 'Quartz seconds and years are not supported'],
        [{ cron: '@daily' }, 400, 'cron: "@daily" shorthands are not supported'],
        [{ cron: '0 0 30 2 *' }, 400, 'cron: the expression never fires'],
        [{ cron: '0 0 * * MON#2' }, 400, 'cron: day-of-week'],
        [{ cron: 5 }, 400, 'cron: must be a string'],
        [{ misfirePolicy: 'later' }, 400, "misfirePolicy: must be 'fire' or 'skip'"],
        [{ concurrent: 'yes' }, 400, 'concurrent: must be true or false'],
        [{ handler: 'backup' }, 400, 'unknown field'],
        [{ name: 'renamed' }, 400, 'unknown field'],
        [{ lastRunAt: '2026-01-01T00:00:00.000Z' }, 400, 'unknown field'],
        [{ cron: '*/5 * * * *', version: job.version + 1 }, 409, 'version:'],
      ];
      for (const [change, status, msg] of refused) {
        await expectScenario(t, {
          method: 'POST',
          path: '/app/sysJob/edit',
          token: admin,
          body: { id: job.id, version: job.version, ...(change as object) },
          status,
          json: { msg: expect.stringContaining(msg) },
          unchanged: ['jobs', 'job_log'],
        });
      }
      expect((await post('/app/sysJob/edit', { id: 999999, version: 1, cron: '* * * * *' })).status).toBe(404);
    });

    test('edit: a change landing between the read and the write is refused by the version guard (409, nothing written)', async () => {
      const job = (await jobRow(t, 'blobSweep'))!;
      // Another edit lands right before the batch: the version moved on.
      beforeBatch(t, 1, `UPDATE jobs SET version = version + 1, cron = '*/30 * * * *' WHERE id = ?`, job.id);
      const r = await post('/app/sysJob/edit', { id: job.id, version: job.version, cron: '*/5 * * * *' });
      expect(r.status).toBe(409);
      expect(await t.row('SELECT cron, version FROM jobs WHERE id = ?', job.id)).toEqual({ cron: '*/30 * * * *', version: job.version + 1 });
      await t.exec(`UPDATE jobs SET cron = '*/10 * * * *' WHERE id = ?`, job.id);
    });

    test('edit: the cron is stored normalised, nextRunAt recomputed, version bumped; the op log has the row', async () => {
      at(t, '2026-11-22T00:00:00.000Z');
      const job = (await jobRow(t, 'logRetention'))!;
      const r = await post('/app/sysJob/edit', { id: job.id, version: job.version, cron: '  15  3  * * 1-5 ', misfirePolicy: 'skip', concurrent: true });
      expect(r.status).toBe(200);
      // 2026-11-22 is a Sunday: the next weekday 03:15 is Monday the 23rd.
      expect(r.data).toMatchObject({ cron: '15 3 * * 1-5', misfirePolicy: 'skip', concurrent: true, nextRunAt: '2026-11-23T03:15:00.000Z', version: job.version + 1 });
      expect(await jobRow(t, 'logRetention')).toMatchObject({ schedule_from: '2026-11-22T00:00:00.000Z' });
      const op = await t.row(`SELECT module, action, status FROM op_log WHERE module = 'sysJob' AND action = 'edit' ORDER BY id DESC LIMIT 1`);
      expect(op).toEqual({ module: 'sysJob', action: 'edit', status: 200 });
      // Back to the seeded schedule for the tests below.
      const back = await post('/app/sysJob/edit', { id: job.id, version: job.version + 1, cron: '*/10 * * * *', misfirePolicy: 'fire', concurrent: false });
      expect(back.status).toBe(200);
    });

    test('edit with status also needs sys:job:changeStatus (403, nothing changed); changeStatus disables and enables', async () => {
      const job = (await jobRow(t, 'blobSweep'))!;
      await expectScenario(t, {
        method: 'POST',
        path: '/app/sysJob/edit',
        token: editor,
        body: { id: job.id, version: job.version, status: 'disabled' },
        status: 403,
        json: { msg: 'status: changing it also requires the permission sys:job:changeStatus' },
        unchanged: ['jobs'],
      });
      // The code held at the read but revoked right before the write: the guard in the batch refuses it.
      const holder = await userWithCodes(t, ['sys:job:edit', 'sys:job:changeStatus']);
      beforeBatch(t, 1, `DELETE FROM role_menu WHERE role_id = ? AND menu_id IN (SELECT id FROM menus WHERE permission = 'sys:job:changeStatus')`, holder.roleId);
      await expectScenario(t, {
        method: 'POST',
        path: '/app/sysJob/edit',
        token: holder.token,
        body: { id: job.id, version: job.version, status: 'disabled' },
        status: 403,
        json: { msg: 'status: changing it also requires the permission sys:job:changeStatus' },
        unchanged: ['jobs'],
      });
      expect((await post('/app/sysJob/edit', { id: job.id, version: job.version, cron: '*/20 * * * *' }, editor)).status).toBe(200);
      const off = await post('/app/sysJob/changeStatus', { id: job.id, status: 'disabled' });
      expect(off.data).toMatchObject({ status: 'disabled', nextRunAt: null, version: job.version + 2 });
      const on = await post('/app/sysJob/changeStatus', { id: job.id, status: 'enabled' });
      expect(on.data).toMatchObject({ status: 'enabled', version: job.version + 3 });
      expect(on.data.nextRunAt).not.toBeNull();
      expect((await post('/app/sysJob/changeStatus', { id: 999999, status: 'enabled' })).status).toBe(404);
      expect((await post('/app/sysJob/changeStatus', { id: job.id, status: 'paused' })).status).toBe(400);
      const back = await post('/app/sysJob/edit', { id: job.id, version: job.version + 3, cron: '*/10 * * * *' });
      expect(back.status).toBe(200);
    });

    test('run now: runs the job and answers its log row; lastRunAt moves, the op log records it; a backup where none can be made is 501', async () => {
      at(t, '2026-11-22T01:00:00.000Z');
      const before = (await jobLog(t)).length;
      const cleanup = await id('expiredCleanup');
      const r = await post('/app/sysJob/run', { id: cleanup });
      expect(r.status).toBe(200);
      expect(Object.keys(r.data).sort()).toEqual(LOG_FIELDS);
      expect(r.data).toMatchObject({ jobId: cleanup, status: 'success', startedAt: '2026-11-22T01:00:00.000Z' });
      expect(r.data.message).toStartWith('run now; captchas ');
      expect(await jobRow(t, 'expiredCleanup')).toMatchObject({ last_run_at: '2026-11-22T01:00:00.000Z', claimed_at: null });
      expect(await t.row(`SELECT status FROM op_log WHERE module = 'sysJob' AND action = 'run' ORDER BY id DESC LIMIT 1`)).toEqual({ status: 200 });
      // No archives port here (as on Workers): the answer sysBackup gives, nothing run or claimed.
      await expectScenario(t, {
        method: 'POST',
        path: '/app/sysJob/run',
        token: admin,
        body: { id: await id('backup') },
        status: 501,
        json: { msg: expect.stringContaining('D1 Time Travel') },
        unchanged: ['jobs', 'job_log', 'backups'],
      });
      expect((await post('/app/sysJob/run', { id: 999999 })).status).toBe(404);
      expect((await jobLog(t)).length).toBe(before + 1);
    });

    test('job log: page by job, status and start; delete skips unknown ids; clear counts what it removed', async () => {
      await t.exec('DELETE FROM job_log');
      const cleanup = await id('expiredCleanup');
      const sweep = await id('blobSweep');
      const rows: [number, string, string, string][] = [
        [cleanup, 'Expired', 'success', '2026-11-20T10:00:00.000Z'],
        [cleanup, 'Expired', 'failure', '2026-11-21T10:00:00.000Z'],
        [sweep, 'Blob sweep', 'success', '2026-11-21T23:59:59.000Z'],
        [sweep, 'Blob sweep', 'success', '2026-11-22T00:00:01.000Z'],
      ];
      for (const [jobId, name, status, started] of rows) {
        await t.exec(
          'INSERT INTO job_log (job_id, job_name, status, message, started_at, finished_at, duration_ms) VALUES (?, ?, ?, ?, ?, ?, 5)',
          jobId, name, status, 'm', started, started,
        );
      }
      const page = async (params: unknown) => {
        const r = await post('/app/sysJobLog/page', { params, pageSize: 100 });
        expect(r.status).toBe(200);
        return r.data.records.map((x: any) => x.startedAt);
      };
      const all = await post('/app/sysJobLog/page', {});
      expect(all.data.total).toBe(4);
      expect(Object.keys(all.data.records[0]).sort()).toEqual(LOG_FIELDS);
      expect(all.data.records.map((x: any) => x.startedAt)).toEqual(rows.map((r) => r[3]).reverse());
      expect(await page({ jobId: cleanup })).toEqual([rows[1]![3], rows[0]![3]]);
      expect(await page({ status: 'failure' })).toEqual([rows[1]![3]]);
      expect(await page({ createdFrom: '2026-11-21', createdTo: '2026-11-21' })).toEqual([rows[2]![3], rows[1]![3]]);
      for (const params of [{ jobId: 'x' }, { jobId: 0 }, { status: 'running' }, { createdFrom: 'yesterday' }, { name: 'x' }]) {
        expect((await post('/app/sysJobLog/page', { params })).status).toBe(400);
      }
      for (const [, ids] of BAD_IDS) {
        await expectScenario(t, { method: 'POST', path: '/app/sysJobLog/delete', token: admin, body: { ids }, status: 400, unchanged: ['job_log'] });
      }
      const first = (await t.row<{ id: number }>('SELECT min(id) AS id FROM job_log'))!.id;
      expect((await post('/app/sysJobLog/delete', { ids: [first, 999999] })).data).toEqual({ deleted: 1 });
      expect((await post('/app/sysJobLog/clear')).data).toEqual({ deleted: 3 });
      expect(await t.count('job_log')).toBe(0);
      const ops = await t.rows(`SELECT action, status FROM op_log WHERE module = 'sysJobLog' AND status = 200 AND operator_name = 'admin' ORDER BY id`);
      expect(ops).toEqual([{ action: 'delete', status: 200 }, { action: 'clear', status: 200 }]);
    });

    test.skipIf(runtime !== 'd1')('D1 round trips: a read 1, a write 2 (run now: the job\'s own statements are its own)', async () => {
      const cleanup = await id('expiredCleanup');
      const job = (await jobRow(t, 'expiredCleanup'))!;
      const counts: Record<string, number> = {};
      const count = async (name: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
        const r = await t.call(method, path, { token: admin, body });
        expect(`${name} ${r.status}`).toBe(`${name} 200`);
        counts[name] = rt(r.res);
      };
      await count('page', 'POST', '/app/sysJob/page', {});
      await count('detail', 'GET', `/app/sysJob/detail?id=${cleanup}`);
      await count('edit', 'POST', '/app/sysJob/edit', { id: cleanup, version: job.version, cron: '*/10 * * * *' });
      await count('edit status', 'POST', '/app/sysJob/edit', { id: cleanup, version: job.version + 1, status: 'enabled' });
      await count('changeStatus', 'POST', '/app/sysJob/changeStatus', { id: cleanup, status: 'enabled' });
      await count('run', 'POST', '/app/sysJob/run', { id: cleanup });
      await count('log page', 'POST', '/app/sysJobLog/page', { params: { jobId: cleanup } });
      await count('log delete', 'POST', '/app/sysJobLog/delete', { ids: [1] });
      await count('log clear', 'POST', '/app/sysJobLog/clear');
      console.log(counts);
      expect(counts).toEqual({
        page: 1,
        detail: 1,
        edit: 2, // the row (with the auth row), then the batch under its version
        'edit status': 2, // the code for status travels with the row read
        changeStatus: 2,
        run: 2, // the row, then the claim; the run's own statements go through a detached runner
        'log page': 1,
        'log delete': 2,
        'log clear': 2,
      });
    });
  });
}
