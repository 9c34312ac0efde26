/**
 * The worst case of the login-log name-prefix total (src/db/log-counts.ts): every row a distinct
 * name (failed logins with made-up names), and a prefix matching half of them, so both the keys in
 * range and the complement hold ~N/2 keys. Compares the count-table total with the plain COUNT
 * over the (login_name NOCASE, created_at) index on the same rows. Names grow with time, so a
 * longer prefix ("a00", "a000") matches only OLD rows: the newest-first page must not walk the
 * whole log to find them (PageOptions.seek); the op log gets the same rows for its operatorName.
 * `bun bench/log-counts-worst.ts [rows=1000000] [iterations=50]`
 */
import { loadavg } from 'node:os';
import { makeTestApp } from '../test/support/app.ts';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function run(rows = 1_000_000, iterations = 50) {
  const t = await makeTestApp();
  const started = performance.now();
  t.sqlite.run(
    `INSERT INTO login_log (login_name, status, msg, ip, created_at)
     WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${rows})
     SELECT CASE i % 2 WHEN 0 THEN 'a' ELSE 'b' END || printf('%07d', i), CASE WHEN i % 3 = 0 THEN 'success' ELSE 'failure' END, 'm',
            CASE i % 2 WHEN 0 THEN '10.' ELSE '11.' END || (i / 65536 % 256) || '.' || (i / 256 % 256) || '.' || (i % 256),
            strftime('%Y-%m-%dT%H:%M:%fZ', 1790000000 - 31536000 + i * (31536000.0 / ${rows}), 'unixepoch') FROM k`,
  );
  t.sqlite.run(
    `INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, duration_ms, trace_id, created_at)
     SELECT 'sysUser', 'edit', 'POST', '/app/sysUser/edit', NULL, login_name, ip, 'ua', '{}', 200, 5, printf('%032x', id), created_at FROM login_log ORDER BY id`,
  );
  t.sqlite.run('ANALYZE');
  console.log(`seeded ${rows} rows with distinct names in ${(performance.now() - started).toFixed(0)} ms`);
  const token = await t.login();
  const time = async (label: string, body: unknown, direct?: string, path = '/app/sysLoginLog/page') => {
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < iterations; i++) {
      const s = performance.now();
      if (direct) total = (t.sqlite.query(direct).get() as { n: number }).n;
      else {
        const r = await t.call('POST', path, { token, body });
        total = r.data.total;
      }
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    return { case: label, p50: +pct(times, 50).toFixed(2), p99: +pct(times, 99).toFixed(2), total };
  };
  const results = [
    await time('page, loginName "a" (50% of rows, 50% of keys)', { params: { loginName: 'a' } }),
    await time('plain COUNT of the same rows (the index walk)', {}, `SELECT count(*) AS n FROM login_log WHERE login_name COLLATE NOCASE >= 'a' AND login_name COLLATE NOCASE < 'a' || CAST(x'F5' AS TEXT)`),
    await time('page, loginName "a00" (5% of rows)', { params: { loginName: 'a00' } }),
    await time('page, loginName "a" + searchCount=false', { params: { loginName: 'a' }, searchCount: false }),
    await time('page, loginName "a000" (0.5%, all old)', { params: { loginName: 'a000' } }),
    await time('page, loginName "a00" + date range (all)', { params: { loginName: 'a00', createdFrom: '2020-01-01', createdTo: '2030-01-01' } }),
    await time('page, loginName "a00", page 50', { params: { loginName: 'a00' }, pageNo: 50 }),
    await time('op log page, operatorName "a00" (5%, all old)', { params: { operatorName: 'a00' } }, undefined, '/app/sysOpLog/page'),
    await time('page, loginName "a" + status failure', { params: { loginName: 'a', status: 'failure' } }),
    await time('page, ip "10." (50% of rows, 50% of addresses)', { params: { ip: '10.' } }),
    await time('page, ip "10." + status failure', { params: { ip: '10.', status: 'failure' } }),
    await time('page, ip "10." + a date range (half the year)', { params: { ip: '10.', createdFrom: '2026-01-01', createdTo: '2026-07-01' } }),
    await time('op log page, operatorName "a"', { params: { operatorName: 'a' } }, undefined, '/app/sysOpLog/page'),
  ];
  console.log(`\n${iterations} requests each; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.table(results);

  // What the count triggers cost the writes: a log row inserted alone (a login), with a name seen
  // before and a new one; a retention chunk (500 oldest rows, as cleanup deletes them); the clear.
  const insert = t.sqlite.query(`INSERT INTO login_log (login_name, status, msg, ip, created_at) VALUES (?, 'failure', 'm', ?, '2026-09-30T00:00:00.000Z')`);
  const perRow = (name: (i: number) => string) => {
    const s = performance.now();
    for (let i = 0; i < 2000; i++) insert.run(name(i), `10.9.${i % 256}.${i % 7}`);
    return +(((performance.now() - s) / 2000) * 1000).toFixed(1);
  };
  const known = perRow((i) => `a${String(2 * (i + 1)).padStart(7, '0')}`);
  const fresh = perRow((i) => `c${String(i).padStart(7, '0')}`);
  let s = performance.now();
  for (let i = 0; i < 20; i++) t.sqlite.run(`DELETE FROM login_log WHERE id IN (SELECT id FROM login_log ORDER BY created_at LIMIT 500)`);
  const chunk = +((performance.now() - s) / 20).toFixed(2);
  s = performance.now();
  const cleared = await t.call('POST', '/app/sysLoginLog/clear', { token, body: {} });
  const clearMs = Math.round(performance.now() - s);
  console.table([
    { write: 'login_log row, a name seen before (µs)', value: known },
    { write: 'login_log row, a new name (µs)', value: fresh },
    { write: 'retention chunk of 500 rows (ms)', value: chunk },
    { write: `clear of ${cleared.data?.deleted} rows through the API (ms)`, value: clearMs },
  ]);
}

if (import.meta.main) {
  const [rows, iterations] = process.argv.slice(2).map(Number);
  await run(rows, iterations);
}
