import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, MIGRATIONS_DIR } from '../src/adapters/bun/migrate.ts';
import { dataSql } from '../scripts/restore-worker.ts';
import { cleanup } from '../src/modules/maintenance/cleanup.ts';
import { D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';

// The two log pages answer their `total` from count tables kept by triggers (migration 0011) when
// the filter is one those tables answer. The total must stay the exact number of matching rows
// through every way rows come and go: log writes, delete by ids, retention's chunked deletes and
// clear. Each total is checked against the rows themselves, read and filtered here in JS.

const days = ['2026-09-01', '2026-09-02', '2026-09-03', '2026-10-15', '2026-11-20'];
const TIMES = ['T00:00:00.000Z', 'T08:30:00.000Z', 'T23:59:59.999Z'];

/** ASCII-case-insensitive "starts with", as SQLite's NOCASE compares. */
const startsNocase = (s: string | null, p: string) => s !== null && s.toLowerCase().startsWith(p.toLowerCase());
const inRange = (at: string, from?: string, to?: string) => (from === undefined || at >= from) && (to === undefined || at <= to);
const bounds = (p: Record<string, any>) => ({
  from: p.createdFrom ? new Date(p.createdFrom).toISOString() : undefined,
  to: p.createdTo ? (/^\d{4}-\d{2}-\d{2}$/.test(p.createdTo) ? `${p.createdTo}T23:59:59.999Z` : new Date(p.createdTo).toISOString()) : undefined,
});

const LOGIN_FILTERS: Record<string, any>[] = [
  {},
  { status: 'success' },
  { status: 'failure' },
  { createdFrom: '2026-09-02' },
  { createdTo: '2026-09-02' },
  { createdFrom: '2026-09-02', createdTo: '2026-10-15' },
  { createdFrom: '2026-09-01T08:30:00.000Z', createdTo: '2026-10-15T08:30:00.000Z' },
  { createdFrom: '2026-09-02T00:00:00.000Z', createdTo: '2026-09-03T23:59:59.999Z' },
  { createdFrom: '2026-09-02T00:00:00.001Z', createdTo: '2026-09-03T23:59:59.998Z' },
  { createdFrom: '2026-09-02T08:00:00.000Z', createdTo: '2026-09-02T09:00:00.000Z' },
  { createdFrom: '2026-09-01T08:30:00+02:00', status: 'success' },
  { status: 'failure', createdFrom: '2026-09-02', createdTo: '2026-11-20' },
  { loginName: 'adm' },
  { loginName: 'ADM', status: 'success' },
  { loginName: 'bulk' }, // thousands of distinct names under one start
  { loginName: 'bulk', status: 'failure' },
  { loginName: 'b' },
  { loginName: 'bulk01' },
  { loginName: 'zzz' },
  { loginName: 'bulk', createdFrom: '2026-09-02' },
  { loginName: 'bulk', createdFrom: '2026-09-01', createdTo: '2026-11-20' }, // few rows outside the dates: name total minus those
  { loginName: 'bulk', status: 'failure', createdFrom: '2026-09-01T08:30:00.000Z', createdTo: '2026-10-15' },
  { loginName: 'adm', createdTo: '2026-09-02T08:30:00.000Z' },
  { ip: '10.' },
  { ip: '10.', status: 'success' },
  { ip: '10.1' },
  { ip: '10.', loginName: 'bulk' },
  { ip: '10.1', createdFrom: '2026-09-02', createdTo: '2026-10-15' },
  { ip: '10.', status: 'failure', createdFrom: '2026-09-01T08:30:00.000Z' },
  { ip: '10.1.', status: 'success', createdTo: '2026-09-02' },
  { ip: '172.16.0.1' },
  { loginName: 'L'.repeat(48) }, // the longest filter: names longer than the trees keep (48 characters) still match
  { loginName: `${'L'.repeat(47)}x`, status: 'failure' },
  { loginName: 'bulk0001', status: 'success' },
  { loginName: 'BULK0', createdFrom: '2026-09-02', status: 'failure' },
];

const OP_FILTERS: Record<string, any>[] = [
  {},
  { status: 200 },
  { status: 409 },
  { createdFrom: '2026-09-02', createdTo: '2026-10-15' },
  { createdFrom: '2026-09-01T08:30:00.000Z', status: 200 },
  { module: 'sysUser' },
  { module: 'sysUser', action: 'edit' },
  { action: 'edit' },
  { action: 'edit', status: 409 },
  { operatorName: 'bulk' },
  { operatorName: 'Op', status: 200 },
  { operatorName: 'o' },
  { module: 'sysUser', createdFrom: '2026-09-02' },
  { module: 'sysUser', createdFrom: '2026-09-01', createdTo: '2026-11-20' },
  { action: 'edit', status: 200, createdFrom: '2026-09-01T08:30:00.000Z' },
  { operatorName: 'bulk', createdFrom: '2026-09-01', createdTo: '2026-11-20' },
  { operatorName: 'op', createdTo: '2026-10-15T08:30:00.000Z', status: 409 },
  { operatorName: 'bulk', module: 'sysRole' },
  { operatorName: 'bulk00', status: 409 },
  { operatorName: 'OP1', createdFrom: '2026-09-02' },
];

async function seed(t: AnyTestApp) {
  // Thousands of distinct names sharing starts: a deep prefix tree (and many keys per start).
  const bulk = 4396;
  for (const [i, day] of days.entries()) {
    for (const time of TIMES) {
      await t.exec(
        `INSERT INTO login_log (login_name, user_id, status, msg, ip, created_at)
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
         SELECT printf('bulk%05d', i), NULL, CASE WHEN i % 3 = 0 THEN 'failure' ELSE 'success' END, 'm',
                printf('10.%d.0.1', i % 20), ? FROM k WHERE i % 15 = ?`,
        bulk, `${day}${time}`, (i * 3 + TIMES.indexOf(time)) % 15,
      );
      for (const name of ['admin', 'Admin', 'ADMIN2', 'ghost', 'b', 'L'.repeat(60), `${'L'.repeat(47)}x${i}`, 'adm\u{10FFFF}in']) {
        await t.exec(`INSERT INTO login_log (login_name, status, msg, ip, created_at) VALUES (?, ?, 'm', ?, ?)`, name, name.length % 2 ? 'success' : 'failure', name === 'ghost' ? '172.16.0.1' : '10.1.2.3', `${day}${time}`);
      }
      await t.exec(
        `INSERT INTO op_log (module, action, method, path, operator_id, operator_name, status, created_at)
         WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40)
         SELECT CASE i % 3 WHEN 0 THEN 'sysUser' WHEN 1 THEN 'sysRole' ELSE 'sysFile' END, CASE i % 2 WHEN 0 THEN 'edit' ELSE 'add' END,
                'POST', '/x', NULL, CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN 'Op' || (i % 7) ELSE printf('bulk%03d', i) END,
                CASE WHEN i % 5 = 0 THEN 409 ELSE 200 END, ? FROM k`,
        `${day}${time}`,
      );
    }
  }
}

async function expectLoginTotals(t: AnyTestApp, token: string) {
  const rows = await t.rows<{ login_name: string; status: string; ip: string; created_at: string }>('SELECT login_name, status, ip, created_at FROM login_log');
  for (const params of LOGIN_FILTERS) {
    const { from, to } = bounds(params);
    const want = rows.filter(
      (r) =>
        (params.loginName === undefined || startsNocase(r.login_name, params.loginName)) &&
        (params.ip === undefined || r.ip.startsWith(params.ip)) &&
        (params.status === undefined || r.status === params.status) &&
        inRange(r.created_at, from, to),
    ).length;
    const r = await t.call('POST', '/app/sysLoginLog/page', { token, body: { params, pageSize: 1 } });
    expect({ params, total: r.data?.total }).toEqual({ params, total: want });
  }
}

async function expectOpTotals(t: AnyTestApp, token: string) {
  const rows = await t.rows<{ module: string; action: string; operator_name: string | null; status: number; created_at: string }>(
    'SELECT module, action, operator_name, status, created_at FROM op_log',
  );
  for (const params of OP_FILTERS) {
    const { from, to } = bounds(params);
    const want = rows.filter(
      (r) =>
        (params.module === undefined || r.module === params.module) &&
        (params.action === undefined || r.action === params.action) &&
        (params.operatorName === undefined || startsNocase(r.operator_name, params.operatorName)) &&
        (params.status === undefined || r.status === params.status) &&
        inRange(r.created_at, from, to),
    ).length;
    const r = await t.call('POST', '/app/sysOpLog/page', { token, body: { params, pageSize: 1 } });
    expect({ params, total: r.data?.total }).toEqual({ params, total: want });
  }
}

const TREES = [
  { tree: 'login_log_name_tree', log: 'login_log', column: 'login_name', collate: ' COLLATE NOCASE' },
  { tree: 'login_log_ip_tree', log: 'login_log', column: 'ip', collate: '' },
  { tree: 'op_log_name_tree', log: 'op_log', column: 'operator_name', collate: ' COLLATE NOCASE' },
];

/**
 * The count tables hold exactly what a GROUP BY over the logs gives (and no key at 0); every row of
 * a prefix tree counts the rows whose key (first 48 characters) starts with it and is it; and for
 * EVERY start of every key, each status, the tree's first row at or after it counts exactly the
 * log rows starting with it (the rule countByTree reads).
 */
async function expectCountTables(t: AnyTestApp) {
  const pairs: [string, string][] = [
    ['SELECT day, status, n FROM login_log_day_counts', `SELECT substr(created_at, 1, 10) AS day, status, count(*) AS n FROM login_log GROUP BY 1, 2`],
    ['SELECT day, status, n FROM op_log_day_counts', `SELECT substr(created_at, 1, 10) AS day, status, count(*) AS n FROM op_log GROUP BY 1, 2`],
    ['SELECT module, action, status, n FROM op_log_module_counts', 'SELECT module, action, status, count(*) AS n FROM op_log GROUP BY 1, 2, 3'],
  ];
  for (const [kept, truth] of pairs) {
    const order = ' ORDER BY 1, 2, 3';
    expect(await t.rows(`SELECT * FROM (${kept})${order}`)).toEqual(await t.rows(`SELECT * FROM (${truth})${order}`));
  }
  for (const { tree, log, column, collate } of TREES) {
    const under = (p: string) => `${column}${collate} >= ${p} AND ${column}${collate} < ${p} || CAST(x'F5' AS TEXT)`;
    const wrong = await t.rows(
      `SELECT * FROM (SELECT t.status, t.prefix, t.n, t.own,
         (SELECT count(*) FROM ${log} WHERE status = t.status AND ${under('t.prefix')}) AS rows_under,
         (SELECT count(*) FROM ${log} WHERE status = t.status AND ${under('t.prefix')} AND substr(${column}, 1, 48) = t.prefix${collate}) AS rows_own
       FROM ${tree} AS t) WHERE n <> rows_under OR own <> rows_own OR n <= 0`,
    );
    expect({ tree, wrong }).toEqual({ tree, wrong: [] });
    const starts = await t.row<{ n: number }>(`SELECT count(*) AS n FROM (SELECT DISTINCT status, substr(${column}, 1, k)${collate} FROM ${log}, prefix_lengths WHERE k <= length(${column}))`);
    // The check below covers something whenever the log has a row with a key.
    const keyed = await t.row<{ n: number }>(`SELECT count(*) AS n FROM ${log} WHERE ${column} <> ''`);
    expect(starts!.n > 0).toBe(keyed!.n > 0);
    const miscounted = await t.rows(
      `SELECT * FROM (SELECT x.status, x.p,
         coalesce((SELECT n FROM ${tree} WHERE status = x.status AND prefix >= x.p AND prefix < x.p || CAST(x'F5' AS TEXT) ORDER BY prefix LIMIT 1), 0) AS tree_says,
         (SELECT count(*) FROM ${log} WHERE status = x.status AND ${under('x.p')}) AS rows_say
       FROM (SELECT DISTINCT status, substr(${column}, 1, k)${collate} AS p FROM ${log}, prefix_lengths WHERE k <= length(${column})) AS x)
       WHERE tree_says <> rows_say LIMIT 5`,
    );
    expect({ tree, miscounted }).toEqual({ tree, miscounted: [] });
  }
}

for (const runtime of RUNTIMES) {
  describe(`${runtime}: log totals from the count tables`, () => {
    let t: AnyTestApp;
    let admin: string;

    test('exact through writes, delete by ids, retention and clear', async () => {
      t = await makeTestApp({ runtime, env: { LOG_RETENTION_DAYS: '60' } });
      admin = await t.login();
      await seed(t);
      await expectCountTables(t);
      await expectLoginTotals(t, admin);
      await expectOpTotals(t, admin);
      // A name going on with U+10FFFF (the last character) starts with "adm" too: in the rows and in the total.
      const odd = await t.call('POST', '/app/sysLoginLog/page', { token: admin, body: { params: { loginName: 'ADM\u{10FFFF}' }, pageSize: 100 } });
      expect({ total: odd.data.total, names: [...new Set(odd.data.records.map((r: { loginName: string }) => r.loginName))] }).toEqual({ total: 15, names: ['adm\u{10FFFF}in'] });
      const adm = await t.call('POST', '/app/sysLoginLog/page', { token: admin, body: { params: { loginName: 'adm' }, pageSize: 100 } });
      expect(adm.data.records.filter((r: { loginName: string }) => r.loginName === 'adm\u{10FFFF}in').length).toBe(15);

      // Delete by ids through the API: a few of each kind of row.
      const loginIds = (await t.rows<{ id: number }>(`SELECT id FROM login_log WHERE id % 97 = 0 OR login_name IN ('Admin', 'b') LIMIT 100`)).map((r) => r.id);
      // The deleted numbers are the log rows, not the rows the count triggers wrote too (D1 counts those in its changes).
      expect((await t.call('POST', '/app/sysLoginLog/delete', { token: admin, body: { ids: loginIds } })).data).toEqual({ deleted: loginIds.length });
      const opIds = (await t.rows<{ id: number }>(`SELECT id FROM op_log WHERE id % 7 = 0 LIMIT 100`)).map((r) => r.id);
      expect((await t.call('POST', '/app/sysOpLog/delete', { token: admin, body: { ids: opIds } })).data).toEqual({ deleted: opIds.length });
      await expectCountTables(t);
      await expectLoginTotals(t, admin);
      await expectOpTotals(t, admin);

      // Retention (60 days before 2026-11-22): the September days go, in chunks, over runs.
      const old = (await t.row<{ n: number }>(`SELECT count(*) AS n FROM login_log WHERE created_at < '2026-09-23'`))!.n;
      let more = 1;
      let swept = 0;
      while (more) {
        const run = await cleanup(t.deps);
        swept += run.loginLog ?? 0;
        more = run.more ?? 0;
      }
      expect(swept).toBe(old);
      expect(await t.row(`SELECT count(*) AS n FROM login_log WHERE created_at < '2026-09-23'`)).toEqual({ n: 0 });
      expect(await t.row(`SELECT count(*) AS n FROM login_log_day_counts WHERE day < '2026-09-23'`)).toEqual({ n: 0 });
      await expectCountTables(t);
      await expectLoginTotals(t, admin);
      await expectOpTotals(t, admin);

      // Clear: every row goes, and so does every key (clear writes one op-log row of its own).
      const left = await t.count('login_log');
      expect((await t.call('POST', '/app/sysLoginLog/clear', { token: admin, body: {} })).data).toEqual({ deleted: left });
      expect(await t.count('login_log')).toBe(0);
      for (const table of ['login_log_day_counts', 'login_log_name_tree', 'login_log_ip_tree', 'log_bulk_delete']) expect({ table, n: await t.count(table) }).toEqual({ table, n: 0 });
      expect((await t.call('POST', '/app/sysOpLog/clear', { token: admin, body: {} })).status).toBe(200);
      // Only the clear's own op-log row is left, in its count tables too.
      expect(await t.count('op_log')).toBe(1);
      expect(await t.rows('SELECT n, own FROM op_log_name_tree')).toEqual([{ n: 1, own: 1 }]);
      await expectCountTables(t);
      await expectLoginTotals(t, admin);
      await expectOpTotals(t, admin);
      // Logins after the clear are counted from zero.
      await t.login();
      expect((await t.call('POST', '/app/sysLoginLog/page', { token: admin, body: {} })).data.total).toBe(1);
    }, 120_000 + D1_START_MS);
  });
}

describe('count tables of logs written before migrations 0011 and 0017', () => {
  test('the migrations fill them from the rows already there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mig-'));
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0011')) copyFileSync(join(MIGRATIONS_DIR, f), join(dir, f));
    const db = new Database(':memory:');
    migrate(db, dir);
    db.run(`INSERT INTO login_log (login_name, status, msg, ip, created_at) VALUES ('Admin', 'success', 'm', '10.0.0.1', '2026-01-01T10:00:00.000Z'), ('admin', 'success', 'm', '10.0.0.2', '2026-01-01T11:00:00.000Z'), ('adx', 'success', 'm', '10.0.0.2', '2026-01-01T12:00:00.000Z'), ('x', 'failure', 'm', '', '2026-01-02T00:00:00.000Z')`);
    db.run(`INSERT INTO op_log (module, action, method, path, operator_name, status, created_at) VALUES ('m', 'a', 'POST', '/', NULL, 200, '2026-01-01T10:00:00.000Z'), ('m', 'a', 'POST', '/', 'Op', 200, '2026-01-01T10:00:00.000Z')`);
    migrate(db);
    // Each key with its rows, and the start two adjacent keys share ('ad', '10.0.0.') with the rows under it.
    expect(db.query('SELECT status, lower(prefix) AS prefix, n, own FROM login_log_name_tree ORDER BY 1, 2').all()).toEqual([
      { status: 'failure', prefix: 'x', n: 1, own: 1 },
      { status: 'success', prefix: 'ad', n: 3, own: 0 },
      { status: 'success', prefix: 'admin', n: 2, own: 2 },
      { status: 'success', prefix: 'adx', n: 1, own: 1 },
    ]);
    expect(db.query('SELECT status, prefix, n, own FROM login_log_ip_tree ORDER BY 1, 2').all()).toEqual([
      { status: 'success', prefix: '10.0.0.', n: 3, own: 0 },
      { status: 'success', prefix: '10.0.0.1', n: 1, own: 1 },
      { status: 'success', prefix: '10.0.0.2', n: 2, own: 2 },
    ]);
    expect(db.query('SELECT day, status, n FROM login_log_day_counts ORDER BY 1, 2').all()).toEqual([
      { day: '2026-01-01', status: 'success', n: 3 },
      { day: '2026-01-02', status: 'failure', n: 1 },
    ]);
    // A row without an operator is in no tree.
    expect(db.query('SELECT status, prefix, n, own FROM op_log_name_tree').all()).toEqual([{ status: 200, prefix: 'Op', n: 1, own: 1 }]);
    expect(db.query('SELECT module, action, status, n FROM op_log_module_counts').all()).toEqual([{ module: 'm', action: 'a', status: 200, n: 2 }]);
    // And the triggers run from then on.
    db.run(`DELETE FROM login_log WHERE login_name IN ('x', 'adx')`);
    expect(db.query(`SELECT count(*) AS n FROM login_log_day_counts WHERE day = '2026-01-02'`).get()).toEqual({ n: 0 });
    expect(db.query('SELECT status, lower(prefix) AS prefix, n, own FROM login_log_name_tree ORDER BY 1, 2').all()).toEqual([
      { status: 'success', prefix: 'ad', n: 2, own: 0 }, // a start no pair shares any more: kept, and right
      { status: 'success', prefix: 'admin', n: 2, own: 2 },
    ]);
    // A counted column cannot be edited behind the counts' back.
    expect(() => db.run(`UPDATE login_log SET status = 'failure'`)).toThrow(/counted/);
    expect(() => db.run(`UPDATE login_log SET ip = '1.1.1.1'`)).toThrow(/counted/);
    expect(() => db.run(`UPDATE op_log SET module = 'x'`)).toThrow(/counted/);
    db.run(`UPDATE op_log SET error_msg = 'fine'`);
  });
});

describe('restore --to worker and the count tables', () => {
  test('the load rebuilds them through the triggers: no key counted twice', async () => {
    const from = await makeTestApp();
    const token = await from.login();
    await seed(from);
    const sql = dataSql(from.sqlite).sql;
    const to = await makeTestApp();
    await to.login(); // the target has rows of its own, which the load replaces
    to.sqlite.exec(sql);
    for (const table of ['login_log_day_counts', 'login_log_name_tree', 'login_log_ip_tree', 'op_log_day_counts', 'op_log_name_tree', 'op_log_module_counts']) {
      expect(to.sqlite.query(`SELECT * FROM ${table} ORDER BY 1, 2, 3`).all()).toEqual(from.sqlite.query(`SELECT * FROM ${table} ORDER BY 1, 2, 3`).all());
    }
    const admin = await to.login();
    for (const params of [{}, { loginName: 'bulk' }, { status: 'success' }]) {
      const a = (await from.call('POST', '/app/sysLoginLog/page', { token, body: { params } })).data.total;
      const b = (await to.call('POST', '/app/sysLoginLog/page', { token: admin, body: { params } })).data.total;
      expect(b).toBe(a + (Object.keys(params).length === 0 || params.status === 'success' ? 1 : 0)); // + the login just made
    }
    await expectCountTables(to);
  });
});
