import { expect, test } from 'bun:test';
import { beforeBatch, perRuntime, type AnyTestApp } from './support/app.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { csvLines, parseCsv } from '../src/core/csv.ts';
import { xlsxStream } from '../src/core/xlsx-write.ts';
import { delegationWorld, WORLD_PASSWORD } from './support/delegation-world.ts';

let t: AnyTestApp;
let admin: string;
const INIT = 'Imported-Passw0rd-7';
const TABLES = ['users', 'user_role', 'user_post', 'sessions'];
const snap = async () => JSON.stringify(await Promise.all(TABLES.map((tb) => t.rows(`SELECT * FROM ${tb} ORDER BY 1, 2`))));

const csvFile = (rows: string[][]) => new TextEncoder().encode('\uFEFF' + csvLines(rows));
async function xlsxFile(rows: string[][]) {
  const rest = rows.slice(1);
  return new Uint8Array(await new Response(xlsxStream(rows[0]!, (async function* () { yield* rest; })())).arrayBuffer());
}

async function upload(file: Uint8Array, opts: { updateSupport?: boolean; dryRun?: boolean; token?: string; name?: string } = {}) {
  const form = new FormData();
  form.set('file', new File([file as Uint8Array<ArrayBuffer>], opts.name ?? 'users.csv'));
  if (opts.updateSupport !== undefined) form.set('updateSupport', String(opts.updateSupport));
  if (opts.dryRun !== undefined) form.set('dryRun', String(opts.dryRun));
  const res = await t.request('/app/sysUser/import', { method: 'POST', headers: { authorization: `Bearer ${opts.token ?? admin}` }, body: form });
  const json = (await res.json()) as { status: number; msg: string; data: any };
  return { status: res.status, msg: json.msg, data: json.data };
}

const HEADER = ['Login name*', 'Nick name', 'Email', 'Status', 'Organisation code', 'Roles', 'Posts'];

perRuntime(
  (app, token) => ((t = app), (admin = token)),
  () => {
    test('the template: the header row, as XLSX and CSV', async () => {
      for (const format of ['xlsx', 'csv']) {
        const res = await t.request(`/app/sysUser/importTemplate?format=${format}`, { headers: { authorization: `Bearer ${admin}` } });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-disposition')).toContain(`users-import-template.${format}`);
        const bytes = new Uint8Array(await res.arrayBuffer());
        const rows = format === 'xlsx' ? await readSheet(bytes) : parseCsv(bytes);
        expect(rows[0]![0]).toBe('Login name*');
        expect(rows.length).toBe(1);
      }
    });

    test('dry run and refusals report every row and change nothing; then the import writes all rows at once', async () => {
      expect((await t.call('POST', '/app/sysPost/add', { token: admin, body: { code: 'imp_post', name: 'Imported' } })).status).toBe(200);
      expect((await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'imp role', code: 'imp_role' } })).status).toBe(200);
      const rows = [
        HEADER,
        ['imp_a', 'Alice', 'a@example.com', '正常', '', 'imp_role', 'imp_post'],
        ['imp_b', '', '', 'disabled', '', '', ''],
      ];
      const before = await snap();
      // No initial password yet: a 400 naming the parameter, nothing written.
      const noInit = await upload(csvFile(rows));
      expect(noInit.status).toBe(400);
      expect(noInit.msg).toContain('sys.user.initPassword');
      await t.exec(`UPDATE configs SET config_value = ? WHERE config_key = 'sys.user.initPassword'`, INIT);
      const bad = [...rows, ['imp_a', 'dup', '', '', '', '', ''], ['x', 'short name', 'not-an-email', 'maybe', 'nowhere', 'no_role', 'no_post'], ['admin', 'taken', '', '', '', '', '']];
      for (const dryRun of [true, false]) {
        const r = await upload(csvFile(bad), { dryRun });
        expect(r.status).toBe(200);
        expect(r.data.created + r.data.updated).toBe(0);
        expect(r.data.failed).toBe(3);
        const cols = r.data.errors.map((e: any) => `${e.row}:${e.column}`);
        expect(cols).toEqual(['4:Login name', '5:Login name', '5:Email', '5:Status', '6:Login name']);
        expect(await snap()).toBe(before);
      }
      // Dry run of the good rows: what would happen, nothing written.
      const dry = await upload(await xlsxFile(rows), { dryRun: true, name: 'users.xlsx' });
      expect(dry.data).toEqual({ created: 2, updated: 0, failed: 0, errors: [] });
      expect(await snap()).toBe(before);
      const done = await upload(await xlsxFile(rows), { name: 'users.xlsx' });
      expect(done.data).toEqual({ created: 2, updated: 0, failed: 0, errors: [] });
      const a = await t.row<any>(`SELECT u.*, (SELECT group_concat(r.code) FROM user_role ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id) AS roles,
        (SELECT count(*) FROM user_post WHERE user_id = u.id) AS posts FROM users u WHERE login_name = 'imp_a'`);
      expect([a.nick_name, a.email, a.status, a.roles, a.posts]).toEqual(['Alice', 'a@example.com', 'enabled', 'imp_role', 1]);
      expect((await t.row<any>(`SELECT status, nick_name FROM users WHERE login_name = 'imp_b'`))).toEqual({ status: 'disabled', nick_name: 'imp_b' });
      await t.login('imp_a', INIT);
      // The same names again: errors unless updateSupport; with it, updates (empty cells unchanged).
      const again = [HEADER, ['IMP_A', 'Alice Two', '', '', '', '', '']];
      const refused = await upload(csvFile(again));
      expect(refused.data.failed).toBe(1);
      expect(refused.data.errors[0].msg).toContain('updateSupport');
      const updated = await upload(csvFile(again), { updateSupport: true });
      expect(updated.data).toEqual({ created: 0, updated: 1, failed: 0, errors: [] });
      const a2 = await t.row<any>(`SELECT nick_name, email, version FROM users WHERE login_name = 'imp_a'`);
      expect([a2.nick_name, a2.email, a2.version]).toEqual(['Alice Two', 'a@example.com', a.version + 1]);
      // an exported file imports back (export-only columns are read past)
      const exported = await t.request('/app/sysUser/export', { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ params: { loginName: 'imp_' }, format: 'xlsx' }) });
      const back = await upload(new Uint8Array(await exported.arrayBuffer()), { updateSupport: true, name: 'users.xlsx' });
      expect(back.data).toEqual({ created: 0, updated: 2, failed: 0, errors: [] });
    });

    test('a delegated admin imports only into her scope and grants only roles she holds; every refused row changes nothing', async () => {
      await t.exec(`UPDATE configs SET config_value = ? WHERE config_key = 'sys.user.initPassword'`, INIT);
      const w = await delegationWorld(t, admin, 'imd');
      const small = await w.role(['sys:user:page']);
      const big = await w.role(['sys:user:page', 'sys:role:delete']);
      const boss = await w.caller(['sys:user:import', 'sys:user:grantRole', 'sys:user:page'], 'orgAndBelow', w.org.sales);
      const outsider = await w.user(w.org.support);
      const codes = await t.rows<{ id: number; code: string }>(`SELECT id, code FROM roles WHERE id IN (?, ?)`, small, big);
      const code = (id: number) => codes.find((c) => c.id === id)!.code;
      const before = await snap();
      const rows = [
        HEADER,
        ['imd_ok', '', '', '', 'imd_sales1', code(small), ''],
        ['imd_out', '', '', '', 'imd_support', '', ''],
        ['imd_big', '', '', '', 'imd_sales', code(big), ''],
        ['imd_none', '', '', '', '', '', ''],
        ['imd_super', '', '', '', 'imd_sales', 'superAdmin', ''],
        [outsider.loginName, 'renamed', '', '', '', '', ''],
      ];
      const r = await upload(csvFile(rows), { token: boss.token, updateSupport: true });
      expect(r.status).toBe(200);
      expect(r.data.errors.map((e: any) => `${e.row}:${e.column}`)).toEqual(['3:Organisation code', '4:Roles', '5:Organisation code', '6:Roles', '7:Login name']);
      expect(await snap()).toBe(before);
      // The rows she may write go through, inside her scope.
      const ok = await upload(csvFile([HEADER, rows[1]!]), { token: boss.token });
      expect(ok.data).toEqual({ created: 1, updated: 0, failed: 0, errors: [] });
      // A move racing the import (the caller leaves for another branch between the check and the
      // write): the guards inside the write batch refuse it whole.
      beforeBatch(t, 1, `UPDATE users SET org_id = ? WHERE id = ?`, w.org.support, boss.id);
      const race = await upload(csvFile([HEADER, ['imd_race', '', '', '', 'imd_sales1', '', '']]), { token: boss.token });
      expect(race.status).toBe(403);
      await t.exec(`UPDATE users SET org_id = ? WHERE id = ?`, w.org.sales, boss.id);
      expect(await t.row(`SELECT id FROM users WHERE login_name = 'imd_race'`)).toBeNull();
      // Without the import code: 403, nothing read or written.
      const other = await w.caller(['sys:user:page'], 'all', null);
      const denied = await upload(csvFile([HEADER, ['imd_x', '', '', '', '', '', '']]), { token: other.token });
      expect(denied.status).toBe(403);
      expect(await t.row(`SELECT id FROM users WHERE login_name = 'imd_x'`)).toBeNull();
      void WORLD_PASSWORD;
    });

    test('oversize, malformed and wrongly shaped files are 4xx and change nothing', async () => {
      const before = await snap();
      const big = new Uint8Array(5 * 1024 * 1024 + 10).fill(0x41);
      expect((await upload(big)).status).toBe(413);
      expect((await upload(new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]), { name: 'x.xlsx' })).status).toBe(400);
      expect((await upload(csvFile([['who', 'what'], ['a', 'b']]))).msg).toContain('unknown column');
      expect((await upload(csvFile([HEADER]))).msg).toContain('no rows');
      const tooMany = [HEADER, ...Array.from({ length: 5001 }, (_, i) => [`many_${i}`, '', '', '', '', '', ''])];
      expect((await upload(csvFile(tooMany))).status).toBe(400);
      const notForm = await t.request('/app/sysUser/import', { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: '{}' });
      expect(notForm.status).toBe(400);
      expect((await upload(csvFile([HEADER, ['ok_name', '', '', '', '', '', '']]), { dryRun: 'yes' as never })).status).toBe(400);
      expect(await snap()).toBe(before);
    });
  },
);
