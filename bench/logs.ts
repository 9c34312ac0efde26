/**
 * Page-query latency over big tables, measured through app.request() in one process (the router,
 * auth, validation, SQL and JSON are all in; the socket is not): sysLoginLog/page over N login-log
 * rows, sysOpLog/page over N op-log rows, sysUser/page over M users and sysFile/page over F file
 * records — every filter and every sort field of each.
 * `bun bench/logs.ts [rows=1000000] [users=100000] [iterations=200] [files=100000] [--only <regex>]`;
 * `npm run bench logs` runs it too. `--only` keeps the scenarios whose "<path> <scenario>" matches
 * the (case-insensitive) regex, e.g. `--only 'sysUser.*orgId'`, and seeds only the tables they read
 * (the 1M-row log tables take most of the set-up).
 */
import { loadavg } from 'node:os';
import { makeTestApp } from '../test/support/app.ts';
import { seedFilesAndGrants, seedLoginLogs, seedOpLogs, seedUsers, seededLoginName } from './seed-logs.ts';

type Suite = [path: string, scenarios: [name: string, body: Record<string, unknown>][]];

/** Every scenario, per page route. */
function suites(endMs: number, roleId: number, orgId: number): Suite[] {
  const daysAgo = (d: number) => new Date(endMs - d * 86_400_000).toISOString().slice(0, 10);
  const month = { createdFrom: daysAgo(120), createdTo: daysAgo(90) };
  // Counts of most of the million rows: every filter the contract allows that can match nearly all.
  const everything = { createdFrom: daysAgo(400), createdTo: daysAgo(-1) };
  const lastHalfYear = { createdFrom: new Date(endMs - 182.5 * 86_400_000).toISOString() };
  return [
    [
      '/app/sysLoginLog/page',
      [
        ['first page', {}],
        ['deep page 5,000', { pageNo: 5000 }],
        ['loginName filter (one user)', { params: { loginName: seededLoginName(4242) } }],
        ['date range (one month)', { params: month }],
        ['date range, deep page 500', { params: month, pageNo: 500 }],
        ['broad loginName prefix "user0"', { params: { loginName: 'user0' } }],
        ['ip prefix "10.7."', { params: { ip: '10.7.' } }],
        ['status failure', { params: { status: 'failure' } }],
        ['first page, searchCount=false', { searchCount: false }],
        ['deep page 5,000, searchCount=false', { pageNo: 5000, searchCount: false }],
        ['broad prefix, searchCount=false', { params: { loginName: 'user0' }, searchCount: false }],
        ['sort loginName asc', { sortField: 'loginName', sortOrder: 'asc' }],
        ['sort ip', { sortField: 'ip' }],
        ['sort status', { sortField: 'status' }],
        ['status failure, sort loginName', { params: { status: 'failure' }, sortField: 'loginName' }],
        ['loginName filter, sort ip', { params: { loginName: seededLoginName(4242) }, sortField: 'ip' }],
        ['broad: status success (85%)', { params: { status: 'success' } }],
        ['broad: date range covering everything', { params: everything }],
        ['broad: createdFrom a date-time, last half year', { params: lastHalfYear }],
        ['broad: status success + date range (all)', { params: { status: 'success', ...everything } }],
        ['broad: ip prefix "10." (every row)', { params: { ip: '10.' } }],
        ['broad: loginName "user0" + status success', { params: { loginName: 'user0', status: 'success' } }],
        ['broad: loginName "user" (97%, complement side)', { params: { loginName: 'user' } }],
        ['broad: loginName "user0" + date range (all)', { params: { loginName: 'user0', ...everything } }],
      ],
    ],
    [
      '/app/sysOpLog/page',
      [
        ['first page', {}],
        ['deep page 5,000', { pageNo: 5000 }],
        ['module filter', { params: { module: 'sysUser' } }],
        ['module + action filter', { params: { module: 'sysUser', action: 'edit' } }],
        ['action filter', { params: { action: 'delete' } }],
        ['operatorName (one operator)', { params: { operatorName: seededLoginName(42) } }],
        ['status 409', { params: { status: 409 } }],
        ['date range (one month)', { params: month }],
        ['module filter, date range', { params: { module: 'sysRole', ...month } }],
        ['sort module', { sortField: 'module' }],
        ['sort operatorName', { sortField: 'operatorName' }],
        ['sort status', { sortField: 'status' }],
        ['sort durationMs', { sortField: 'durationMs' }],
        ['module filter, sort durationMs', { params: { module: 'sysUser' }, sortField: 'durationMs' }],
        ['broad: status 200 (90%)', { params: { status: 200 } }],
        ['broad: date range covering everything', { params: everything }],
        ['broad: createdFrom a date-time, last half year', { params: lastHalfYear }],
        ['broad: operatorName prefix "user000" (every row)', { params: { operatorName: 'user000' } }],
        ['broad: module + status 200', { params: { module: 'sysUser', status: 200 } }],
        ['broad: operatorName "user000" + date range (all)', { params: { operatorName: 'user000', ...everything } }],
        ['status 409, sort operatorName', { params: { status: 409 }, sortField: 'operatorName' }],
        ['module filter, searchCount=false', { params: { module: 'sysUser' }, searchCount: false }],
      ],
    ],
    [
      '/app/sysUser/page',
      [
        ['first page', {}],
        ['deep page 5,000', { pageNo: 5000 }],
        ['loginName filter', { params: { loginName: seededLoginName(4242) } }],
        ['status disabled', { params: { status: 'disabled' } }],
        ['date range (one month)', { params: month }],
        ['sort loginName', { sortField: 'loginName' }],
        ['sort nickName', { sortField: 'nickName' }],
        ['sort updatedAt', { sortField: 'updatedAt' }],
        ['sort lastLoginAt', { sortField: 'lastLoginAt' }],
        ['status disabled, sort loginName', { params: { status: 'disabled' }, sortField: 'loginName' }],
        ['nickName (part of it)', { params: { nickName: 'ber 4242' } }],
        ['nickName part of, broad "ber 1" (11%)', { params: { nickName: 'ber 1' } }],
        ['nickName part of "ber 99" (1.1%)', { params: { nickName: 'ber 99' } }],
        ['nickName part of, sort loginName', { params: { nickName: 'ber 4242' }, sortField: 'loginName' }],
        ['phone prefix', { params: { phone: '+155512' } }],
        ['roleId (10% of users)', { params: { roleId } }],
        ['orgId (1/7 of users)', { params: { orgId } }],
        ['orgId, sort loginName', { params: { orgId }, sortField: 'loginName' }],
        ['sort id asc', { sortField: 'id', sortOrder: 'asc' }],
        ['sort createdAt asc', { sortField: 'createdAt', sortOrder: 'asc' }],
      ],
    ],
    [
      '/app/sysFile/page',
      [
        ['first page', {}],
        ['deep page 5,000', { pageNo: 5000 }],
        ['name part of "report"', { params: { name: 'report' } }],
        ['name part of, rare "-4242."', { params: { name: '-4242.' } }],
        ['extension pdf', { params: { extension: 'pdf' } }],
        ['contentType "application/pdf"', { params: { contentType: 'application/pdf' } }],
        ['contentType part of "office"', { params: { contentType: 'office' } }],
        ['date range (one month)', { params: month }],
        ['sort name', { sortField: 'name' }],
        ['sort size', { sortField: 'size' }],
        ['extension pdf, sort size', { params: { extension: 'pdf' }, sortField: 'size' }],
        ['sort createdAt asc', { sortField: 'createdAt', sortOrder: 'asc' }],
      ],
    ],
  ];
}

/** The scenarios whose "<path> <scenario>" matches `only` (all without it), routes left empty dropped. */
function selected(all: Suite[], only?: RegExp): Suite[] {
  if (!only) return all;
  return all.map(([path, scenarios]): Suite => [path, scenarios.filter(([name]) => only.test(`${path} ${name}`))]).filter(([, scenarios]) => scenarios.length > 0);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function run(rows = 1_000_000, users = 100_000, iterations = 200, files = 100_000, only?: RegExp) {
  const t = await makeTestApp();
  const endMs = t.clock.now();
  console.log(`\nseeded ${users} users in ${seedUsers(t.sqlite, users, { endMs }).toFixed(0)} ms`);
  // Only what the chosen scenarios read (the ids in them do not matter for choosing).
  const wanted = (path: string) => selected(suites(endMs, 0, 0), only).some(([p]) => p === path);
  if (wanted('/app/sysLoginLog/page')) console.log(`seeded ${rows} login-log rows in ${seedLoginLogs(t.sqlite, rows, { endMs, names: users }).toFixed(0)} ms`);
  if (wanted('/app/sysOpLog/page')) console.log(`seeded ${rows} op-log rows in ${seedOpLogs(t.sqlite, rows, { endMs, operators: 1000 }).toFixed(0)} ms`);
  console.log(`seeded ${files} file records, a role and an org in ${seedFilesAndGrants(t.sqlite, files, { users, endMs }).toFixed(0)} ms`);
  t.sqlite.run('ANALYZE');
  const roleId = (t.sqlite.query(`SELECT id FROM roles WHERE code = 'bench_readers'`).get() as { id: number }).id;
  const orgId = (t.sqlite.query(`SELECT id FROM orgs WHERE code = 'bench_branch'`).get() as { id: number }).id;
  const token = await t.login();
  const results: Record<string, unknown>[] = [];
  for (const [path, scenarios] of selected(suites(endMs, roleId, orgId), only)) {
    for (const [name, body] of scenarios) {
      const times: number[] = [];
      let total = 0;
      let skipped = false;
      for (let i = 0; i < iterations && !skipped; i++) {
        const started = performance.now();
        const res = await t.app.request(path, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as { status: number; msg: string; data: { total: number } };
        times.push(performance.now() - started);
        if (json.status === 404) skipped = true;
        else if (json.status !== 200) throw new Error(`${path} ${name}: ${json.status} ${json.msg}`);
        else total = json.data.total;
      }
      if (skipped) {
        results.push({ path, scenario: name, p50: '-', p99: '-', total: 'route not mounted' });
        continue;
      }
      times.sort((a, b) => a - b);
      results.push({ path, scenario: name, p50: +pct(times, 50).toFixed(2), p99: +pct(times, 99).toFixed(2), total });
    }
  }
  console.log(`\npage latency in ms through app.request(), ${iterations} requests each, ${rows} login-log and ${rows} op-log rows, ${users} users, ${files} files${only ? ` (only /${only.source}/; tables it does not read left empty)` : ''}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.table(results);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--only');
  const only = at >= 0 ? new RegExp(args.splice(at, 2)[1] ?? '', 'i') : undefined;
  const [rows, users, iterations, files] = args.map(Number);
  await run(rows, users, iterations, files, only);
}
