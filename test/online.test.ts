import { beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './support/app.ts';
import { BAD_PAGE_REQUESTS, USER_PASSWORD, userWithCodes } from './support/rbac-fixture.ts';
import { expectGuarded } from './support/scenario.ts';

let t: TestApp;
let admin: string;
let nobody: string;
let granted: string;
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

beforeAll(async () => {
  t = await makeTestApp();
  admin = await t.login('admin', undefined, { 'x-test-ip': '192.0.2.10', 'user-agent': CHROME });
  nobody = (await userWithCodes(t, [], 'nobody')).token;
  granted = (await userWithCodes(t, ['sys:online:page', 'sys:online:forceLogout'], 'operator')).token;
});

const page = (body: unknown = {}, token = admin) => t.call('POST', '/app/sysOnlineUser/page', { token, body });
const kick = (sessionIds: unknown, token = admin) => t.call('POST', '/app/sysOnlineUser/forceLogout', { token, body: { sessionIds } });
const me = (token: string) => t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token });
const sessionOf = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
const live = () => (t.sqlite.query('SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL').get() as { n: number }).n;

describe('auth table', () => {
  test('page: no token 401, no code 403, granted 200', async () => {
    const op = { code: 'sys:online:page', method: 'POST', path: '/app/sysOnlineUser/page', request: () => ({ body: {} }) } as const;
    await expectGuarded(t, op, { refused: nobody, granted }, ['sessions']);
  });

  test('forceLogout: no token 401, no code 403 (the session stays), granted 200', async () => {
    // A plain user's session (a super admin's is for super admins only: see data-scope-rows.test.ts).
    const victim = (await userWithCodes(t, [], 'victim')).token;
    const id = sessionOf(victim);
    const op = {
      code: 'sys:online:forceLogout',
      method: 'POST',
      path: '/app/sysOnlineUser/forceLogout',
      // Before every caller, so also after the refused ones: the victim's session still works.
      request: async () => {
        expect((await me(victim)).status).toBe(200);
        return { body: { sessionIds: [id] } };
      },
    } as const;
    const ok = await expectGuarded(t, op, { refused: nobody, granted }, ['sessions']);
    expect(ok.json?.data).toEqual({ revoked: 1 });
    expect((await me(victim)).status).toBe(401);
  });
});

describe('page', () => {
  test('lists live sessions only, with the contract fields', async () => {
    const u = await userWithCodes(t, [], 'Pat_Smith');
    const second = await t.login('Pat_Smith', USER_PASSWORD, { 'x-test-ip': '198.51.100.7' });
    const loggedOut = await t.login('Pat_Smith', USER_PASSWORD);
    expect((await t.call('POST', '/auth/logout', { token: loggedOut })).status).toBe(200);
    // An expired session that was never revoked.
    t.sqlite.run(
      "INSERT INTO sessions (id, user_id, ip, login_at, expires_at) VALUES ('00000000-0000-4000-8000-000000000001', ?, '203.0.113.1', '2020-01-01T00:00:00.000Z', '2020-02-01T00:00:00.000Z')",
      [u.userId],
    );
    const r = await page({ params: { loginName: 'pat_' }, pageSize: 100 });
    expect(r.status).toBe(200);
    const ids = r.data.records.map((x: any) => x.sessionId).sort();
    expect(ids).toEqual([sessionOf(u.token), sessionOf(second)].sort());
    expect(r.data).toMatchObject({ total: 2, size: 100, current: 1, pages: 1, searchCount: true });
    const rec = r.data.records.find((x: any) => x.sessionId === sessionOf(second));
    expect(Object.keys(rec).sort()).toEqual(['browser', 'expiresAt', 'ip', 'loginAt', 'loginName', 'os', 'sessionId', 'userAgent', 'userId'].sort());
    expect(rec).toMatchObject({ userId: u.userId, loginName: 'Pat_Smith', ip: '198.51.100.7' });
    expect(new Date(rec.expiresAt).getTime() - new Date(rec.loginAt).getTime()).toBe(t.deps.config.TOKEN_TTL_SECONDS * 1000);
    const adminRow = (await page({ params: { loginName: 'admin', ip: '192.0.2.' } })).data.records[0];
    expect(adminRow).toMatchObject({ loginName: 'admin', ip: '192.0.2.10', userAgent: CHROME, browser: 'Chrome 131', os: 'Windows 10/11' });
  });

  test('filters match case-insensitively and treat % and _ literally; injection strings are plain text', async () => {
    await userWithCodes(t, [], 'patXsmith');
    const names = async (loginName: string) =>
      (await page({ params: { loginName }, pageSize: 100 })).data.records.map((x: any) => x.loginName as string);
    expect(new Set(await names('PAT'))).toEqual(new Set(['Pat_Smith', 'patXsmith']));
    expect(new Set(await names('pat_'))).toEqual(new Set(['Pat_Smith']));
    expect(await names('%')).toEqual([]);
    expect(await names("' OR '1'='1")).toEqual([]);
    expect(await names('admin" --')).toEqual([]);
    expect((await page({ params: { ip: '%' } })).data.total).toBe(0);
  });

  test('sorts by a whitelisted field; a page past the end is empty; searchCount=false skips the count', async () => {
    const asc = await page({ sortField: 'loginName', sortOrder: 'asc', pageSize: 100 });
    const list = asc.data.records.map((x: any) => x.loginName.toLowerCase());
    expect(list).toEqual([...list].sort());
    const past = await page({ pageNo: 999 });
    expect(past.status).toBe(200);
    expect(past.data.records).toEqual([]);
    expect(past.data.total).toBe(asc.data.total);
    const nocount = await page({ searchCount: false });
    expect(nocount.data).toMatchObject({ total: 0, pages: 0, searchCount: false });
    expect(nocount.data.records.length).toBeGreaterThan(0);
  });

  for (const [name, body] of [
    ...BAD_PAGE_REQUESTS,
    ['an empty loginName', { params: { loginName: '' } }],
    ['a 65-character loginName', { params: { loginName: 'x'.repeat(65) } }],
    ['a numeric ip', { params: { ip: 10 } }],
    ['a createdFrom (not a filter here)', { params: { createdFrom: '2026-01-01' } }],
  ] as [string, unknown][]) {
    test(`refuses ${name} with 400`, async () => {
      const r = await page(body);
      expect(r.status).toBe(400);
      expect(r.json.data).toBeNull();
    });
  }
});

describe('forceLogout', () => {
  test('revokes on the very next request, leaves other sessions alone, is recorded', async () => {
    const a = await t.login();
    const b = await t.login();
    const before = t.count('op_log');
    const r = await kick([sessionOf(a), sessionOf(a).toUpperCase()]);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ revoked: 1 });
    expect((await me(a)).status).toBe(401);
    expect((await me(b)).status).toBe(200);
    expect(t.count('op_log')).toBe(before + 1);
    const log = t.sqlite.query('SELECT module, action, status, params FROM op_log ORDER BY id DESC LIMIT 1').get() as any;
    expect(log).toMatchObject({ module: 'sysOnlineUser', action: 'forceLogout', status: 200 });
    expect(JSON.parse(log.params).sessionIds).toEqual([sessionOf(a)]);
    const listed = await page({ pageSize: 100 });
    expect(listed.data.records.some((x: any) => x.sessionId === sessionOf(a))).toBe(false);
  });

  test('unknown and already ended sessions are skipped', async () => {
    const a = await t.login();
    await kick([sessionOf(a)]);
    const r = await kick([sessionOf(a), crypto.randomUUID()]);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ revoked: 0 });
  });

  test('an operator may end their own session', async () => {
    const own = await t.login();
    expect((await kick([sessionOf(own)], own)).status).toBe(200);
    expect((await page({}, own)).status).toBe(401);
  });

  const bad: [string, unknown][] = [
    ['not a UUID', ['not-a-uuid']],
    ['an injection string', ["' OR 1=1 --"]],
    ['a number', [1]],
    ['a string instead of an array', '00000000-0000-4000-8000-000000000001'],
    ['an empty array', []],
    ['101 ids', Array.from({ length: 101 }, () => crypto.randomUUID())],
    ['a nested array', [[crypto.randomUUID()]]],
    ['null', null],
  ];
  for (const [name, ids] of bad) {
    test(`refuses ${name} with 400 and revokes nothing`, async () => {
      const before = live();
      const r = await kick(ids);
      expect(r.status).toBe(400);
      expect(r.json.msg).toMatch(/^sessionIds/);
      expect(live()).toBe(before);
    });
  }

  test('100 ids are accepted; an unknown field is 400', async () => {
    const ids = Array.from({ length: 100 }, () => crypto.randomUUID());
    expect((await kick(ids)).status).toBe(200);
    const before = live();
    const r = await t.call('POST', '/app/sysOnlineUser/forceLogout', { token: admin, body: { sessionIds: ids, all: true } });
    expect(r.status).toBe(400);
    expect(live()).toBe(before);
  });
});
