import { beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, makeTestApp, type TestApp } from './support/app.ts';
import { seedLoginLogs } from '../bench/seed-logs.ts';
import { BAD_IDS, BAD_PAGE_REQUESTS, userWithCodes } from './support/rbac-fixture.ts';
import { expectGuarded, expectScenario, FORGED_TOKENS } from './support/scenario.ts';

let t: TestApp;
let admin: string;
let nobody: string;
let granted: string;

const at = (iso: string) => t.clock.set(Date.parse(iso));
async function failLogin(loginName: string, ip: string) {
  const r = await t.call('POST', '/auth/login', { body: { loginName, password: 'Wrong-password-1' }, headers: { 'x-test-ip': ip } });
  expect(r.status).toBe(401);
}

beforeAll(async () => {
  t = await makeTestApp();
  at('2026-03-10T08:00:00.000Z');
  await t.login('admin', ADMIN_PASSWORD, { 'x-test-ip': '10.0.0.1', 'user-agent': 'curl/8.5.0' });
  at('2026-03-10T23:59:59.500Z');
  await failLogin('admin', '10.0.0.2');
  at('2026-03-11T00:00:00.000Z');
  await failLogin('under_score', '10.0.1.5');
  at('2026-05-01T10:00:00.000Z');
  await failLogin('underXscore', '172.16.0.1');
  await failLogin('pct%name', '172.16.0.1');
  await failLogin("o'brien", '172.16.0.1');
  // Tokens live 30 days, so the ones the tests use are issued last.
  at('2026-11-22T00:00:00.000Z');
  nobody = (await userWithCodes(t, [], 'nobody')).token;
  granted = (await userWithCodes(t, ['sys:loginLog:page', 'sys:loginLog:delete', 'sys:loginLog:clear'], 'auditor')).token;
  admin = await t.login();
});

const page = (body: unknown = {}, token = admin) => t.call('POST', '/app/sysLoginLog/page', { token, body });
const names = async (params: Record<string, unknown>) =>
  (await page({ params, pageSize: 100 })).data.records.map((r: any) => r.loginName as string);
const ids = () => (t.sqlite.query('SELECT id FROM login_log ORDER BY id').all() as { id: number }[]).map((r) => r.id);

describe('page', () => {
  test('lists every attempt, newest first, with the contract fields', async () => {
    const r = await page({ pageSize: 100 });
    expect(r.status).toBe(200);
    expect(r.data.total).toBe(t.count('login_log'));
    expect(r.data.total).toBe(9);
    const times = r.data.records.map((x: any) => x.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(Object.keys(r.data.records[0]).sort()).toEqual(
      ['id', 'loginName', 'userId', 'status', 'msg', 'ip', 'userAgent', 'browser', 'os', 'country', 'city', 'traceId', 'createdAt', 'factor'].sort(),
    );
    const first = r.data.records.at(-1);
    expect(first).toMatchObject({ loginName: 'admin', userId: 1, status: 'success', ip: '10.0.0.1', userAgent: 'curl/8.5.0', browser: 'curl 8', createdAt: '2026-03-10T08:00:00.000Z' });
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/);
    const failed = r.data.records.find((x: any) => x.loginName === 'under_score');
    expect(failed).toMatchObject({ status: 'failure', userId: null, msg: 'Invalid login name or password' });
  });

  test('status filter', async () => {
    const r = await page({ params: { status: 'failure' }, pageSize: 100 });
    expect(r.data.total).toBe(5);
    expect(r.data.records.every((x: any) => x.status === 'failure')).toBe(true);
    expect((await page({ params: { status: 'success' } })).data.total).toBe(4);
  });

  test('loginName matches the start of the name, case-insensitively; % _ and quotes are literal', async () => {
    expect((await names({ loginName: 'ADM' })).sort()).toEqual(['admin', 'admin', 'admin']);
    expect(await names({ loginName: 'dmin' })).toEqual([]);
    expect(await names({ loginName: 'under_' })).toEqual(['under_score']);
    expect(await names({ loginName: 'under' })).toHaveLength(2);
    expect(await names({ loginName: 'pct%' })).toEqual(['pct%name']);
    expect(await names({ loginName: '%' })).toEqual([]);
    expect(await names({ loginName: '_' })).toEqual([]);
    expect(await names({ loginName: "o'" })).toEqual(["o'brien"]);
    expect(await names({ loginName: "' OR 1=1 --" })).toEqual([]);
    expect(await names({ loginName: 'admin"; DROP TABLE login_log; --' })).toEqual([]);
    expect(t.count('login_log')).toBe(9);
  });

  test('ip matches the start of the address', async () => {
    expect((await page({ params: { ip: '10.0.' } })).data.total).toBe(3);
    expect((await page({ params: { ip: '10.0.0.' } })).data.total).toBe(2);
    expect((await page({ params: { ip: '172.16.0.1', status: 'failure' } })).data.total).toBe(3);
    expect((await page({ params: { ip: '0.0' } })).data.total).toBe(0);
  });

  test('createdFrom/createdTo are inclusive; a date-only createdTo covers the whole day', async () => {
    expect((await names({ createdFrom: '2026-03-10', createdTo: '2026-03-10' })).length).toBe(2);
    expect(await names({ createdFrom: '2026-03-11T00:00:00.000Z', createdTo: '2026-03-11T00:00:00.000Z' })).toEqual(['under_score']);
    expect((await names({ createdFrom: '2026-05-01' })).length).toBe(6);
    expect((await names({ createdTo: '2026-03-31', loginName: 'admin' })).length).toBe(2);
  });

  test('sortField from the whitelist; a page past the end is empty; searchCount=false', async () => {
    const asc = await names({});
    expect(asc.length).toBe(9);
    const byName = (await page({ sortField: 'loginName', sortOrder: 'asc', pageSize: 100 })).data.records.map((r: any) => r.loginName.toLowerCase());
    expect(byName).toEqual([...byName].sort());
    const p2 = await page({ pageNo: 2, pageSize: 4 });
    expect(p2.data).toMatchObject({ total: 9, size: 4, current: 2, pages: 3 });
    expect(p2.data.records).toHaveLength(4);
    const past = await page({ pageNo: 50, pageSize: 4 });
    expect(past.status).toBe(200);
    expect(past.data.records).toEqual([]);
    expect(past.data.total).toBe(9);
    expect((await page({ searchCount: false })).data).toMatchObject({ total: 0, pages: 0, searchCount: false });
  });

  for (const [name, body] of [
    ...BAD_PAGE_REQUESTS,
    ['an unknown status', { params: { status: 'ok' } }],
    ['a numeric status', { params: { status: 200 } }],
    ['a date that is not ISO', { params: { createdFrom: '22/11/2026' } }],
    ['an impossible date', { params: { createdFrom: '2026-13-01' } }],
    ['an injection in a date', { params: { createdTo: "2026-01-01' OR '1'='1" } }],
    ['createdFrom after createdTo', { params: { createdFrom: '2026-05-02', createdTo: '2026-05-01' } }],
    ['a 65-character loginName', { params: { loginName: 'a'.repeat(65) } }],
    ['an empty ip', { params: { ip: ' ' } }],
    ['a filter as an object', { params: { loginName: { $ne: '' } } }],
  ] as [string, unknown][]) {
    test(`refuses ${name} with 400`, async () => {
      const r = await page(body);
      expect(r.status).toBe(400);
      expect(r.json.msg.length).toBeGreaterThan(0);
    });
  }

  test('auth table: no token 401, no code 403, granted 200', async () => {
    const op = { code: 'sys:loginLog:page', method: 'POST', path: '/app/sysLoginLog/page', request: () => ({ body: {} }) } as const;
    await expectGuarded(t, op, { refused: nobody, granted }, ['login_log']);
  });
});

describe('delete', () => {
  const del = (body: unknown, token = admin) => t.call('POST', '/app/sysLoginLog/delete', { token, body });

  test('auth table: no token 401, no code 403 (nothing deleted), granted 200', async () => {
    const [victim] = ids();
    const before = t.count('login_log');
    const op = { code: 'sys:loginLog:delete', method: 'POST', path: '/app/sysLoginLog/delete', request: () => ({ body: { ids: [victim] } }) } as const;
    const ok = await expectGuarded(t, op, { refused: nobody, granted }, ['login_log']);
    expect(ok.json?.data).toEqual({ deleted: 1 });
    expect(t.count('login_log')).toBe(before - 1);
  });

  test('deletes the listed rows; ids that do not exist are skipped; recorded in the op log', async () => {
    const [a, b] = ids();
    const before = t.count('login_log');
    const r = await del({ ids: [a, b, a, 987654] });
    expect(r.data).toEqual({ deleted: 2 });
    expect(t.count('login_log')).toBe(before - 2);
    expect((await del({ ids: [a] })).data).toEqual({ deleted: 0 });
    const log = t.sqlite.query('SELECT module, action, status, params FROM op_log ORDER BY id DESC LIMIT 1').get() as any;
    expect(log).toMatchObject({ module: 'sysLoginLog', action: 'delete', status: 200 });
    expect(JSON.parse(log.params)).toEqual({ ids: [a] });
  });

  for (const [name, bad] of BAD_IDS) {
    test(`refuses ids as ${name} with 400 and deletes nothing`, async () => {
      const before = t.count('login_log');
      const r = await del({ ids: bad });
      expect(r.status).toBe(400);
      expect(r.json.msg).toMatch(/^ids/);
      expect(t.count('login_log')).toBe(before);
    });
  }

  test('refuses an unknown field and a missing body', async () => {
    const before = t.count('login_log');
    expect((await del({ ids: [1], all: true })).status).toBe(400);
    expect((await t.call('POST', '/app/sysLoginLog/delete', { token: admin })).status).toBe(400);
    expect(t.count('login_log')).toBe(before);
  });
});

describe('clear', () => {
  const clear = (token: string) => t.call('POST', '/app/sysLoginLog/clear', { token });

  test('no token 401 and no code 403 delete nothing', async () => {
    const before = t.count('login_log');
    const refused = { method: 'POST', path: '/app/sysLoginLog/clear', unchanged: ['login_log'] } as const;
    for (const token of [undefined, ...FORGED_TOKENS]) await expectScenario(t, { ...refused, token, status: 401, json: { status: 401, data: null } });
    await expectScenario(t, { ...refused, token: nobody, status: 403, json: { status: 403, data: null } });
    expect(t.count('login_log')).toBe(before);
    expect(before).toBeGreaterThan(0);
  });

  test('granted: deletes every row, is recorded in the op log, and logging goes on', async () => {
    const before = t.count('login_log');
    const r = await clear(granted);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ deleted: before });
    expect(t.count('login_log')).toBe(0);
    const log = t.sqlite.query('SELECT module, action, status, operator_name FROM op_log ORDER BY id DESC LIMIT 1').get();
    expect(log).toEqual({ module: 'sysLoginLog', action: 'clear', status: 200, operator_name: 'auditor' });
    await failLogin('admin', '10.9.9.9');
    const after = await page();
    expect(after.data.total).toBe(1);
    expect(after.data.records[0]).toMatchObject({ loginName: 'admin', status: 'failure', ip: '10.9.9.9' });
  });
});

describe('broad prefixes (the page walks created_at instead of sorting every match)', () => {
  test('both plans return the same rows and totals', async () => {
    const big = await makeTestApp();
    seedLoginLogs(big.sqlite, 3000, { names: 40, endMs: big.clock.now() });
    const token = await big.login();
    const expected = (where: string, arg: string, offset: number) => ({
      ids: (big.sqlite.query(`SELECT id FROM login_log WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT 10 OFFSET ${offset}`).all(arg) as { id: number }[]).map((r) => r.id),
      total: (big.sqlite.query(`SELECT count(*) AS n FROM login_log WHERE ${where}`).get(arg) as { n: number }).n,
    });
    const cases: [Record<string, string>, string, string][] = [
      [{ loginName: 'USER00' }, "lower(login_name) LIKE ? || '%'", 'user00'], // broad: ≥ 1000 matches
      [{ loginName: 'user00001' }, "login_name LIKE ? || '%'", 'user00001'], // narrow
      [{ ip: '10.' }, "ip LIKE ? || '%'", '10.'],
    ];
    for (const [params, where, arg] of cases) {
      for (const pageNo of [1, 7]) {
        const r = await big.call('POST', '/app/sysLoginLog/page', { token, body: { params, pageNo } });
        expect(r.status).toBe(200);
        const want = expected(where, arg, (pageNo - 1) * 10);
        expect(want.total).toBeGreaterThan(70);
        expect({ ids: r.data.records.map((x: any) => x.id), total: r.data.total }).toEqual(want);
      }
    }
  });
});
