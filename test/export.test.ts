import { expect, test } from 'bun:test';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { parseCsv } from '../src/core/csv.ts';
import { delegationWorld } from './support/delegation-world.ts';

let t: AnyTestApp;
let admin: string;

async function download(path: string, body: unknown, token = admin) {
  const res = await t.request(path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { res, bytes };
}

async function sheet(path: string, params: unknown = {}, token = admin) {
  const { res, bytes } = await download(path, { params, format: 'xlsx' }, token);
  expect(res.status).toBe(200);
  return readSheet(bytes);
}

async function csv(path: string, params: unknown = {}, token = admin) {
  const { res, bytes } = await download(path, { params, format: 'csv' }, token);
  expect(res.status).toBe(200);
  return parseCsv(bytes);
}

perRuntime(
  (app, token) => ((t = app), (admin = token)),
  () => {
    test('posts: filter honoured, labels, both formats', async () => {
      for (const [code, status] of [['exp_a', 'enabled'], ['exp_b', 'disabled'], ['other', 'enabled']]) {
        expect((await t.call('POST', '/app/sysPost/add', { token: admin, body: { code, name: `Post ${code}`, status } })).status).toBe(200);
      }
      const x = await sheet('/app/sysPost/export', { code: 'exp_' });
      expect(x[0]).toEqual(['ID', 'Code', 'Name', 'Sort', 'Status', 'Remark', 'Created at']);
      expect(x.slice(1).map((r) => [r[1], r[4]])).toEqual([['exp_b', '停用'], ['exp_a', '正常']]);
      const c = await csv('/app/sysPost/export', { code: 'exp_' });
      expect(c.slice(1).map((r) => [r[1], r[4]])).toEqual([['exp_b', '停用'], ['exp_a', '正常']]);
    });

    test('every list exports as XLSX and CSV, each a download for this caller only, recorded in the op log', async () => {
      const lists = ['sysUser', 'sysRole', 'sysPost', 'sysDictType', 'sysDictData', 'sysConfig', 'sysNotice', 'sysLoginLog', 'sysOpLog', 'sysOnlineUser', 'sysJob', 'sysJobLog'];
      for (const list of lists) {
        for (const format of ['xlsx', 'csv'] as const) {
          const { res, bytes } = await download(`/app/${list}/export`, { format });
          expect(`${list} ${res.status}`).toBe(`${list} 200`);
          expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="[a-z-]+-\\d{8}-\\d{6}\\.${format}"; filename\\*=UTF-8''`));
          expect(res.headers.get('cache-control')).toBe('private, no-store');
          expect(res.headers.get('x-content-type-options')).toBe('nosniff');
          const rows = format === 'xlsx' ? await readSheet(bytes) : parseCsv(bytes);
          expect(rows.length).toBeGreaterThan(0);
        }
      }
      // the default format is xlsx; the op log has the export
      const { res } = await download('/app/sysRole/export', {});
      expect(res.headers.get('content-type')).toStartWith('application/vnd.openxmlformats');
      const logged = await t.rows<{ n: number }>(`SELECT count(*) AS n FROM op_log WHERE module = 'sysUser' AND action = 'export' AND status = 200`);
      expect(logged[0]!.n).toBe(2);
      const online = await sheet('/app/sysOnlineUser/export');
      expect(online.slice(1).some((r) => r[2] === 'admin')).toBe(true);
    });

    test('a delegated admin exports only the users and log rows of her scope; without the code 403, nothing sent', async () => {
      const w = await delegationWorld(t, admin, 'exs');
      const boss = await w.caller(['sys:user:export', 'sys:loginLog:export', 'sys:opLog:export'], 'orgAndBelow', w.org.sales);
      const inSales1 = await w.user(w.org.sales1);
      const inSupport = await w.user(w.org.support);
      const users = await sheet('/app/sysUser/export', {}, boss.token);
      const names = users.slice(1).map((r) => r[1]);
      expect(names).toContain(inSales1.loginName);
      expect(names).toContain(boss.loginName);
      expect(names).not.toContain(inSupport.loginName);
      expect(names).not.toContain('admin');
      // the filter as the page applies it, inside the scope
      const filtered = await csv('/app/sysUser/export', { loginName: inSales1.loginName }, boss.token);
      expect(filtered.slice(1).map((r) => r[1])).toEqual([inSales1.loginName]);
      const page = await t.call('POST', '/app/sysUser/page', { token: admin, body: { pageSize: 100, params: { orgId: w.org.sales } } });
      expect(page.status).toBe(200);
      // login log rows: the logins of users in scope only
      const logins = await sheet('/app/sysLoginLog/export', {}, boss.token);
      const who = new Set(logins.slice(1).map((r) => r[1]));
      expect(who.has(inSales1.loginName)).toBe(true);
      expect(who.has(inSupport.loginName)).toBe(false);
      expect(who.has('admin')).toBe(false);
      // no code: 403 envelope, no file
      const denied = await download('/app/sysRole/export', { format: 'csv' }, boss.token);
      expect(denied.res.status).toBe(403);
      expect(denied.res.headers.get('content-type')).toStartWith('application/json');
      expect(denied.res.headers.get('content-disposition')).toBeNull();
      // no token: 401; bad body: 400
      const anon = await t.request('/app/sysUser/export', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(anon.status).toBe(401);
      expect((await download('/app/sysUser/export', { format: 'pdf' })).res.status).toBe(400);
      expect((await download('/app/sysUser/export', { params: { nope: 1 } })).res.status).toBe(400);
    });

    test('more rows than a chunk: every row once, newest first, across keyset chunks (ties on the sort key too)', async () => {
      // 2,345 op-log rows of one module, and 1,234 live sessions of admin sharing 3 login times.
      await t.exec(`WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 2345)
        INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, duration_ms, trace_id, created_at)
        SELECT 'chunked', 'a' || k, 'POST', '/x', 1, 'admin', '127.0.0.1', 'ua', '{}', 200, 1, 't' || k, '2026-11-21T00:00:00.000Z' FROM i`);
      await t.exec(`WITH RECURSIVE i(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM i WHERE k < 1234)
        INSERT INTO sessions (id, user_id, ip, login_at, expires_at) SELECT printf('chunk-%05d', k), 1, '10.9.9.9', '2026-11-21T0' || (k % 3) || ':00:00.000Z', '2099-01-01T00:00:00.000Z' FROM i`);
      const ops = await csv('/app/sysOpLog/export', { module: 'chunked' });
      const ids = ops.slice(1).map((r) => Number(r[0]));
      expect(ids.length).toBe(2345);
      expect(new Set(ids).size).toBe(2345);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const online = await csv('/app/sysOnlineUser/export', { ip: '10.9.9.9' });
      const sessions = online.slice(1).map((r) => r[0]);
      expect(sessions.length).toBe(1234);
      expect(new Set(sessions).size).toBe(1234);
      const want = (await t.rows<{ id: string }>(`SELECT id FROM sessions WHERE ip = '10.9.9.9' ORDER BY login_at DESC, id DESC`)).map((r) => r.id);
      expect(sessions).toEqual(want);
    });

    test('CSV: separators, quotes, line breaks and formulas are written safely; XLSX keeps text as text', async () => {
      const remark = '=HYPERLINK("http://x","a,b")\nline 2';
      expect((await t.call('POST', '/app/sysPost/add', { token: admin, body: { code: 'csv_q', name: '@SUM(1) "quoted", comma', remark } })).status).toBe(200);
      const c = await csv('/app/sysPost/export', { code: 'csv_q' });
      expect(c[1]![2]).toBe(`'@SUM(1) "quoted", comma`);
      expect(c[1]![5]).toBe(`'${remark}`);
      const x = await sheet('/app/sysPost/export', { code: 'csv_q' });
      expect(x[1]![2]).toBe('@SUM(1) "quoted", comma');
      expect(x[1]![5]).toBe(remark);
    });
  },
);
