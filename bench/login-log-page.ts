/**
 * sysLoginLog/page latency through app.request() over a seeded in-memory database.
 * `bun bench/login-log-page.ts [rows=1000000] [users=100000] [iterations=200]`
 */
import { makeTestApp } from '../test/support/app';
import { seedLoginLogs, seedUsers, seededLoginName } from './seed-logs';

const [rows = 1_000_000, users = 100_000, iterations = 200] = process.argv.slice(2).map(Number);

const t = await makeTestApp();
const endMs = t.clock.now();
console.log(`seeded ${users} users in ${seedUsers(t.sqlite, users, { endMs }).toFixed(0)} ms`);
console.log(`seeded ${rows} login-log rows in ${seedLoginLogs(t.sqlite, rows, { endMs, names: users }).toFixed(0)} ms`);
t.sqlite.run('ANALYZE');
const token = await t.login();

const day = (msAgo: number) => new Date(endMs - msAgo).toISOString().slice(0, 10);
const scenarios: [string, unknown][] = [
  ['first page', {}],
  ['deep page 5,000', { pageNo: 5000 }],
  ['loginName filter', { params: { loginName: seededLoginName(4242) } }],
  ['date range (one month)', { params: { createdFrom: day(120 * 86_400_000), createdTo: day(90 * 86_400_000) } }],
  ['broad loginName prefix "user0"', { params: { loginName: 'user0' } }],
  ['ip prefix "10.7."', { params: { ip: '10.7.' } }],
  ['status failure', { params: { status: 'failure' } }],
  ['first page, searchCount=false', { searchCount: false }],
  ['deep page 5,000, searchCount=false', { pageNo: 5000, searchCount: false }],
  ['loginName filter, searchCount=false', { params: { loginName: seededLoginName(4242) }, searchCount: false }],
  ['date range, searchCount=false', { params: { createdFrom: day(120 * 86_400_000), createdTo: day(90 * 86_400_000) }, searchCount: false }],
];

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
for (const [name, body] of scenarios) {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    const res = await t.app.request('/app/sysLoginLog/page', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { status: number; data: { total: number; records: unknown[] } };
    times.push(performance.now() - started);
    if (json.status !== 200) throw new Error(`${name}: ${JSON.stringify(json)}`);
    total = json.data.total;
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(40)} p50 ${pct(times, 50).toFixed(2).padStart(8)} ms   p99 ${pct(times, 99).toFixed(2).padStart(8)} ms   total=${total}`);
}
