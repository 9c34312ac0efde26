import { beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './support/app.ts';
import { BAD_IDS, BAD_PAGE_REQUESTS, userWithCodes } from './support/rbac-fixture.ts';
import { expectGuarded } from './support/scenario.ts';

let t: TestApp;
let admin: string;
let nobody: string;
let granted: string;
const SECRET = 'Not-The-Old-Password-9';

const at = (iso: string) => t.clock.set(Date.parse(iso));

beforeAll(async () => {
  t = await makeTestApp();
  admin = await t.login();
  nobody = (await userWithCodes(t, [], 'nobody')).token;
  granted = (await userWithCodes(t, ['sys:opLog:page', 'sys:opLog:detail', 'sys:opLog:delete', 'sys:opLog:clear'], 'auditor')).token;
  at('2026-11-22T01:00:00.000Z');
  const added = await t.call('POST', '/app/sysMenu/add', { token: admin, body: { title: 'Logged', type: 'directory' } });
  expect(added.status).toBe(200);
  at('2026-11-23T01:00:00.000Z');
  const stale = await t.call('POST', '/app/sysMenu/edit', { token: admin, body: { id: added.data.id, version: 9, title: 'x' } });
  expect(stale.status).toBe(409);
  const pw = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: admin, body: { oldPassword: SECRET, newPassword: SECRET + 'x' } });
  expect(pw.status).toBe(400);
  at('2026-11-24T01:00:00.000Z');
  const refused = await t.call('POST', '/app/sysOnlineUser/forceLogout', { token: nobody, body: { sessionIds: [crypto.randomUUID()] } });
  expect(refused.status).toBe(403);
});

const page = (body: unknown = {}, token = admin) => t.call('POST', '/app/sysOpLog/page', { token, body });
const detail = (id: number | string, token = admin) => t.call('GET', `/app/sysOpLog/detail?id=${id}`, { token });
const actions = async (params: Record<string, unknown>) =>
  (await page({ params, pageSize: 100 })).data.records.map((r: any) => `${r.module}/${r.action}:${r.status}`);

/** The contract's op-log fields, on page records and detail alike. */
const PAGE_FIELDS = [
  'id', 'module', 'action', 'method', 'path', 'operatorId', 'operatorName', 'ip', 'userAgent', 'params', 'status', 'errorMsg', 'durationMs', 'traceId', 'createdAt',
  'apiKeyId', 'apiKeyName',
];

describe('page', () => {
  test('newest first, every contract field including the redacted params', async () => {
    const r = await page({ pageSize: 100 });
    expect(r.status).toBe(200);
    expect(r.data.total).toBe(4);
    expect(r.data.records.map((x: any) => `${x.module}/${x.action}:${x.status}`)).toEqual([
      'sysOnlineUser/forceLogout:403',
      'sysLoginUser/updatePassword:400',
      'sysMenu/edit:409',
      'sysMenu/add:200',
    ]);
    for (const rec of r.data.records) expect(Object.keys(rec).sort()).toEqual([...PAGE_FIELDS].sort());
    expect(r.data.records[2]).toMatchObject({ method: 'POST', path: '/app/sysMenu/edit', operatorId: 1, operatorName: 'admin', ip: '127.0.0.1' });
    expect(r.data.records[2].errorMsg).toMatch(/version/);
    expect(r.data.records[3].errorMsg).toBeNull();
  });

  test('filters: module and action exact, operatorName by prefix, status as a number, dates inclusive', async () => {
    expect(await actions({ module: 'sysMenu' })).toEqual(['sysMenu/edit:409', 'sysMenu/add:200']);
    expect(await actions({ module: 'sysmenu' })).toEqual([]);
    expect(await actions({ module: 'sysMenu', action: 'add' })).toEqual(['sysMenu/add:200']);
    expect(await actions({ action: 'forceLogout' })).toEqual(['sysOnlineUser/forceLogout:403']);
    expect(await actions({ operatorName: 'ADM' })).toHaveLength(3);
    expect(await actions({ operatorName: 'nob' })).toEqual(['sysOnlineUser/forceLogout:403']);
    expect(await actions({ operatorName: '%' })).toEqual([]);
    expect(await actions({ operatorName: '_' })).toEqual([]);
    expect(await actions({ operatorName: "admin' OR '1'='1" })).toEqual([]);
    expect(await actions({ status: 409 })).toEqual(['sysMenu/edit:409']);
    expect(await actions({ status: 500 })).toEqual([]);
    expect(await actions({ createdFrom: '2026-11-23', createdTo: '2026-11-23' })).toEqual(['sysLoginUser/updatePassword:400', 'sysMenu/edit:409']);
    expect(await actions({ createdTo: '2026-11-22T01:00:00.000Z' })).toEqual(['sysMenu/add:200']);
  });

  test('sortField from the whitelist; a page past the end is empty', async () => {
    const byStatus = (await page({ sortField: 'status', sortOrder: 'asc', pageSize: 100 })).data.records.map((r: any) => r.status);
    expect(byStatus).toEqual([200, 400, 403, 409]);
    const past = await page({ pageNo: 3, pageSize: 2 });
    expect(past.status).toBe(200);
    expect(past.data).toMatchObject({ records: [], total: 4, pages: 2, current: 3 });
  });

  for (const [name, body] of [
    ...BAD_PAGE_REQUESTS,
    ['status as a string', { params: { status: '409' } }],
    ['status 99', { params: { status: 99 } }],
    ['status 600', { params: { status: 600 } }],
    ['an injection in module', { params: { module: "sysMenu' OR 1=1 --" } }],
    ['a module with a wildcard', { params: { module: 'sys%' } }],
    ['an empty action', { params: { action: '' } }],
    ['a params filter (not allowed)', { params: { params: 'password' } }],
    ['createdFrom after createdTo', { params: { createdFrom: '2026-11-24', createdTo: '2026-11-23' } }],
  ] as [string, unknown][]) {
    test(`refuses ${name} with 400`, async () => {
      const r = await page(body);
      expect(r.status).toBe(400);
    });
  }

  test('auth table: no token 401, no code 403, granted 200; reads are not recorded', async () => {
    const before = t.count('op_log');
    const op = { code: 'sys:opLog:page', method: 'POST', path: '/app/sysOpLog/page', request: () => ({ body: {} }) } as const;
    await expectGuarded(t, op, { refused: nobody, granted }, ['op_log']);
    expect(t.count('op_log')).toBe(before);
  });
});

describe('detail', () => {
  const idOf = (action: string) => (t.sqlite.query('SELECT id FROM op_log WHERE action = ?').get(action) as { id: number }).id;

  test('every field including params; passwords are redacted', async () => {
    const r = await detail(idOf('updatePassword'));
    expect(r.status).toBe(200);
    expect(Object.keys(r.data).sort()).toEqual([...PAGE_FIELDS].sort());
    expect(r.data).toMatchObject({ module: 'sysLoginUser', action: 'updatePassword', status: 400 });
    expect(r.data.params).not.toContain(SECRET);
    expect(JSON.parse(r.data.params)).toEqual({ oldPassword: '[REDACTED]', newPassword: '[REDACTED]' });
    const add = await detail(idOf('add'));
    expect(JSON.parse(add.data.params)).toEqual({ title: 'Logged', type: 'directory' });
  });

  test('404 for an unknown id; 400 for malformed ones', async () => {
    expect((await detail(987654)).status).toBe(404);
    for (const bad of ['abc', '-1', '0', '1%20OR%201=1', '99999999999999999999', '']) expect((await detail(bad)).status).toBe(400);
  });

  test('auth table: no token 401, no code 403, granted 200', async () => {
    const before = t.count('op_log');
    const op = { code: 'sys:opLog:detail', method: 'GET', path: '/app/sysOpLog/detail', request: () => ({ query: `id=${idOf('add')}` }) } as const;
    await expectGuarded(t, op, { refused: nobody, granted }, ['op_log']);
    expect(t.count('op_log')).toBe(before);
  });
});

describe('delete', () => {
  const del = (body: unknown, token = admin) => t.call('POST', '/app/sysOpLog/delete', { token, body });
  const oldest = () => (t.sqlite.query('SELECT id FROM op_log ORDER BY id LIMIT 1').get() as { id: number }).id;

  test('auth table: no token 401, no code 403 (nothing deleted), granted 200', async () => {
    const id = oldest();
    // op_log cannot be an unchanged table here: the refused write by a logged-in caller is recorded.
    const op = {
      code: 'sys:opLog:delete',
      method: 'POST',
      path: '/app/sysOpLog/delete',
      // Before every caller, so also after the refused ones: the row is still there.
      request: () => {
        expect(t.sqlite.query('SELECT id FROM op_log WHERE id = ?').get(id)).not.toBeNull();
        return { body: { ids: [id, 987654] } };
      },
    } as const;
    const ok = await expectGuarded(t, op, { refused: nobody, granted });
    expect(ok.json?.data).toEqual({ deleted: 1 });
    expect(t.sqlite.query('SELECT id FROM op_log WHERE id = ?').get(id)).toBeNull();
  });

  for (const [name, bad] of BAD_IDS) {
    test(`refuses ids as ${name} with 400 and deletes nothing`, async () => {
      const before = t.count('op_log');
      const r = await del({ ids: bad });
      expect(r.status).toBe(400);
      expect(r.json.msg).toMatch(/^ids/);
      // The refused request itself is recorded; nothing else changes.
      expect(t.count('op_log')).toBe(before + 1);
    });
  }
});

describe('clear', () => {
  const clear = (token: string) => t.call('POST', '/app/sysOpLog/clear', { token });

  test('no token 401 and no code 403 delete nothing', async () => {
    const before = t.count('op_log');
    expect((await clear('')).status).toBe(401);
    expect(t.count('op_log')).toBe(before);
    expect((await clear(nobody)).status).toBe(403);
    expect(t.count('op_log')).toBe(before + 1);
  });

  test('granted: leaves exactly one row, the clear itself', async () => {
    const before = t.count('op_log');
    expect(before).toBeGreaterThan(5);
    const r = await clear(granted);
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ deleted: before });
    expect(t.count('op_log')).toBe(1);
    const only = await page({}, granted);
    expect(only.data.total).toBe(1);
    expect(only.data.records[0]).toMatchObject({
      module: 'sysOpLog', action: 'clear', method: 'POST', path: '/app/sysOpLog/clear', operatorName: 'auditor', status: 200, errorMsg: null,
    });
    expect(only.data.records[0].traceId).toBe(r.json.traceId);
  });
});
