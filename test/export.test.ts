import { expect, test } from 'bun:test';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { parseCsv } from '../src/core/csv.ts';

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
  },
);
