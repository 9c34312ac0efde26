import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { userWithCodes } from './support/rbac.ts';
import { Runner, type CallerCheck } from '../src/db/runner.ts';

// Auth on plain-read routes (src/db/runner.ts): the auth statement travels in the
// handler's first read batch. The auth row must still decide every answer exactly as if it had
// been read first: 401 for an ended session or disabled user, 403 without the code, whatever the
// handler would have answered (200, 400, 404), and no data of the batch in the body. And a caller
// whose scope is not `all` sees only their scope although the batch was sent before the server
// knew who they were.

const rt = (res: Response) => Number(res.headers.get('server-timing')?.match(/desc="(\d+) rt/)?.[1] ?? NaN);

for (const runtime of RUNTIMES) {
  describe(runtime, () => {
    let t: AnyTestApp;
    let admin: string;
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
    }, D1_START_MS);

    // Every plain-read route shape: detail, page, the caller's own information, a bad query.
    const reads = [
      ['GET', '/app/sysUser/detail?id=1'],
      ['POST', '/app/sysUser/page', {}],
      ['GET', '/app/sysLoginUser/getLoginUserInformation'],
      ['GET', '/app/sysUser/detail?id=999999'],
      ['GET', '/app/sysUser/detail?id=abc'],
      ['POST', '/app/sysUser/page', { pageSize: 'x' }],
      ['GET', '/app/sysRole/detail?id=1'],
      ['GET', '/app/sysOpLog/detail?id=1'],
    ] as const;

    test('an ended session is 401 on every plain read, before any answer of the handler', async () => {
      const u = await userWithCodes(t, ['sys:user:detail', 'sys:user:page', 'sys:role:detail', 'sys:opLog:detail'], `gate_end_${runtime}`);
      await t.exec(`UPDATE sessions SET revoked_at = ? WHERE user_id = ?`, new Date(t.clock.now()).toISOString(), u.userId);
      for (const [method, path, body] of reads) {
        const r = await t.call(method, path, { token: u.token, body });
        expect([path, r.status, r.json.data ?? null]).toEqual([path, 401, null]);
      }
    });

    test('a disabled user is 401 on every plain read', async () => {
      const u = await userWithCodes(t, ['sys:user:detail', 'sys:user:page', 'sys:role:detail', 'sys:opLog:detail'], `gate_off_${runtime}`);
      await t.exec(`UPDATE users SET status = 'disabled' WHERE id = ?`, u.userId);
      for (const [method, path, body] of reads) {
        const r = await t.call(method, path, { token: u.token, body });
        expect([path, r.status, r.json.data ?? null]).toEqual([path, 401, null]);
      }
    });

    test('without the code: 403 and no data, whatever the handler would have answered', async () => {
      const u = await userWithCodes(t, [], `gate_none_${runtime}`);
      for (const [method, path, body] of reads) {
        if (path.includes('getLoginUserInformation')) continue; // any logged-in user
        const r = await t.call(method, path, { token: u.token, body });
        expect([path, r.status, r.json.data ?? null]).toEqual([path, 403, null]);
      }
      // A role disabled after login takes the code away on the next request.
      const v = await userWithCodes(t, ['sys:user:detail'], `gate_role_${runtime}`);
      expect((await t.call('GET', '/app/sysUser/detail?id=1', { token: v.token })).status).toBe(200);
      await t.exec(`UPDATE roles SET status = 'disabled' WHERE id = ?`, v.roleId);
      const r = await t.call('GET', '/app/sysUser/detail?id=1', { token: v.token });
      expect([r.status, r.json.data ?? null]).toEqual([403, null]);
    });

    // Round trips are what D1 costs; on Bun each statement is a call of its own (nothing to save).
    const trips = (res: Response, n: number) => {
      if (runtime === 'd1') expect(rt(res)).toBe(n);
    };

    test(`a self-scoped caller sees only themselves${runtime === 'd1' ? ', in one round trip for a detail read, two for a page' : ''}`, async () => {
      const u = await userWithCodes(t, ['sys:user:detail', 'sys:user:page'], `gate_self_${runtime}`);
      await t.exec(`UPDATE roles SET data_scope = 'self' WHERE id = ?`, u.roleId);
      const other = await t.call('GET', '/app/sysUser/detail?id=1', { token: u.token });
      expect([other.status, other.json.data ?? null]).toEqual([404, null]);
      trips(other.res, 1);
      const own = await t.call('GET', `/app/sysUser/detail?id=${u.userId}`, { token: u.token });
      expect([own.status, own.data.id]).toEqual([200, u.userId]);
      const page = await t.call('POST', '/app/sysUser/page', { token: u.token, body: {} });
      expect(page.status).toBe(200);
      expect(page.data.records.map((r: { id: number }) => r.id)).toEqual([u.userId]);
      expect(page.data.total).toBe(1);
      trips(page.res, 2);
      // An `all` role: the first batch's page is the answer.
      await t.exec(`UPDATE roles SET data_scope = 'all' WHERE id = ?`, u.roleId);
      const all = await t.call('POST', '/app/sysUser/page', { token: u.token, body: {} });
      expect(all.data.total).toBe(await t.count('users'));
      trips(all.res, 1);
    });

    if (runtime === 'd1') {
      test('a super admin: detail, page and getLoginUserInformation in one round trip each', async () => {
        for (const [method, path, body] of [reads[0], reads[1], reads[2]]) {
          const r = await t.call(method, path, { token: admin, body });
          expect([path, r.status, rt(r.res)]).toEqual([path, 200, 1]);
        }
      });
    }
  });
}

// The runner alone: its own verdict comes before the rows (the middleware's final verdict is a
// second line, tested above through HTTP).
describe('Runner', () => {
  const fakePorts = (rows: unknown[][], calls: string[]) =>
    ({
      read: async (sql: string) => (calls.push(`read ${sql}`), rows[0]!),
      readMany: Object.assign(async (s: { sql: string }[]) => (calls.push(`batch ${s.map((x) => x.sql).join(',')}`), rows), { oneTrip: true }),
      atomic: async () => [],
    }) as never;
  const check = (judge: CallerCheck['judge']): CallerCheck => ({
    userId: 7,
    sessionId: 's',
    statements: [{ sql: 'AUTH', parameters: [] }],
    judge,
    guards: () => [],
    openGuards: () => [],
  });
  const accept: CallerCheck['judge'] = () => ({ caller: { userId: 7, sessionId: 's', loginName: 'x', isSuperAdmin: false } });
  const plan = (sql: string) => ({ reads: [{ sql, parameters: [] }], finish: (rows: unknown[][]) => rows });

  test('a refused auth row rejects the plan: the data rows never reach its finish', async () => {
    const calls: string[] = [];
    const run = new Runner(fakePorts([[], [{ secret: 1 }]], calls));
    run.authenticate(check(([rows]) => (rows?.[0] ? accept([rows]) : { refusal: new Error('401') as never })));
    let finished = false;
    await expect(run.read({ reads: [{ sql: 'SELECT data', parameters: [] }], finish: () => (finished = true) })).rejects.toThrow('401');
    await expect(run.caller()).rejects.toThrow('401');
    expect(finished).toBe(false);
    expect(calls).toEqual(['batch AUTH,SELECT data']);
  });

  test('local SQLite (readManyNow): the auth and data rows read together, a refusal rejects the plan before its finish', async () => {
    const calls: string[] = [];
    const local = (rows: unknown[][]) =>
      ({
        read: async () => [],
        readMany: async () => [],
        atomic: async () => [],
        readNow: (sql: string) => (calls.push(`now ${sql}`), rows[0]!),
        readManyNow: (s: { sql: string }[]) => (calls.push(`together ${s.map((x) => x.sql).join(',')}`), rows),
      }) as never;
    const refused = new Runner(local([[], [{ secret: 1 }]]));
    refused.authenticate(check(([rows]) => (rows?.[0] ? accept([rows]) : { refusal: new Error('401') as never })));
    let finished = false;
    await expect(refused.read({ reads: [{ sql: 'SELECT data', parameters: [] }], finish: () => (finished = true) })).rejects.toThrow('401');
    await expect(refused.caller()).rejects.toThrow('401');
    expect(finished).toBe(false);
    expect(calls).toEqual(['together AUTH,SELECT data']);
    calls.length = 0;
    const accepted = new Runner(local([[{ ok: 1 }], [{ data: 1 }]]));
    accepted.authenticate(check(accept));
    expect(await accepted.read(plan('SELECT data'))).toEqual([[{ data: 1 }]]);
    expect((await accepted.caller()).userId).toBe(7);
    expect(calls).toEqual(['together AUTH,SELECT data']);
  });

  test('an accepted auth row: one batch, the data rows without the auth row, later reads without it', async () => {
    const calls: string[] = [];
    const run = new Runner(fakePorts([[{ ok: 1 }], [{ data: 1 }]], calls));
    run.authenticate(check(accept));
    expect(await run.read(plan('SELECT data'))).toEqual([[{ data: 1 }]]);
    await run.read(plan('SELECT more'));
    expect(calls).toEqual(['batch AUTH,SELECT data', 'batch SELECT more']);
  });

  test('only plain reads travel before the verdict: a write (also one behind WITH or a comment) is refused unsent', async () => {
    const calls: string[] = [];
    const run = new Runner(fakePorts([[{ ok: 1 }], [{ data: 1 }]], calls));
    run.authenticate(check(accept));
    for (const sql of ['WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x', 'UPDATE users SET status = 1', '/* read */ DELETE FROM t', 'REPLACE INTO t VALUES (1)']) {
      await expect(run.read({ reads: [{ sql: 'SELECT 1', parameters: [] }, { sql, parameters: [] }], finish: (r) => r })).rejects.toThrow(
        'only reads may travel before the auth verdict',
      );
    }
    expect(calls).toEqual([]);
    expect(await run.read(plan('-- a read\n  WITH x AS (SELECT 1) SELECT updated_at FROM x'))).toEqual([[{ data: 1 }]]);
  });
});
