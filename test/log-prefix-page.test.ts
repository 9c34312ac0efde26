/**
 * Login-log and op-log pages with a name (or ip) prefix in created_at order are one statement that
 * picks its plan from a probe of the newest (oldest, ascending) PROBE_ROWS rows (PageOptions.seek):
 * the page among them → walk created_at and filter; not, or fewer than SEEK_FEW matches in all →
 * sort the matches' prefix-index entries.
 * Pages beyond the probe's reach choose in two steps as before. Whichever plan, the page answers
 * exactly what the plain query answers — same records, same order, same total — on bun:sqlite and
 * on D1, for super admins, callers of scope `all` and of scope `self`. The oracle is plain SQL on
 * the same database (`substr(lower(col), 1, length(text)) = lower(text)`: NOCASE folds ASCII only,
 * as lower() does without ICU).
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { PROBE_ROWS, SEEK_FEW } from '../src/core/pagination.ts';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { userWithCodes } from './support/rbac.ts';

let t: AnyTestApp;
let admin: string;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

/** Rows per log: the oldest OLD named 'old…' (ip 10.1.…), the rest 'user…' (10.2.…), every 500th 'Mid…'. */
const N = PROBE_ROWS + 1600;
const OLD = 1200;
/** Rows 424…2646: part of the old ones, most of the rest. */
const FROM = '2026-01-01T02:00:00.000Z';
const TO = '2026-01-01T12:30:00.000Z';

interface Caller {
  label: string;
  token: string;
  /** The plain query's scope condition on the log's user column. */
  scope: (col: string) => string;
}

function suite() {
  const callers: Caller[] = [];

  beforeAll(async () => {
    const all = await userWithCodes(t, ['sys:loginLog:page', 'sys:opLog:page']);
    const self = await userWithCodes(t, ['sys:loginLog:page', 'sys:opLog:page']);
    await t.exec(`UPDATE roles SET data_scope = 'self' WHERE id = ?`, self.roleId);
    callers.push({ label: 'super admin', token: admin, scope: () => '1' }, { label: 'scope all', token: all.token, scope: () => '1' });
    callers.push({ label: 'scope self', token: self.token, scope: (col) => `${col} = ${self.userId}` });
    // Two rows per time (ties on created_at, so the id tie-break counts); every third row the
    // self caller's. Straight into the tables (the count triggers fill the count tables).
    const rows = `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${N})`;
    const name = `CASE WHEN i <= ${OLD} THEN 'old' || printf('%03d', i % 150) WHEN i % 500 = 0 THEN 'Mid' || i ELSE 'user' || (i % 97) END`;
    const ip = `CASE WHEN i <= ${OLD} THEN '10.1.' ELSE '10.2.' END || (i % 50) || '.' || (i % 7)`;
    const at = `strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || ((i / 2) * 34) || ' seconds')`;
    const who = `CASE WHEN i % 3 = 0 THEN ${self.userId} ELSE NULL END`;
    await t.exec(
      `INSERT INTO login_log (login_name, user_id, status, msg, ip, user_agent, browser, os, trace_id, created_at)
       ${rows} SELECT ${name}, ${who}, CASE WHEN i % 7 = 0 THEN 'failure' ELSE 'success' END, 'm', ${ip}, 'ua', 'b', 'o', printf('%032x', i), ${at} FROM k`,
    );
    await t.exec(
      `INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, duration_ms, trace_id, created_at)
       ${rows} SELECT CASE i % 3 WHEN 0 THEN 'sysUser' ELSE 'sysRole' END, 'edit', 'POST', '/x', ${who},
              CASE WHEN i % 250 = 1 THEN NULL ELSE ${name} END, ${ip}, 'ua', '{}', CASE WHEN i % 7 = 0 THEN 409 ELSE 200 END, i % 100, printf('%032x', i), ${at} FROM k`,
    );
  }, 60_000);

  const starts = (col: string, text: string) => `substr(lower(${col}), 1, ${text.length}) = lower('${text}')`;

  /** The plain query's answer: ids in order, and the total. */
  async function plain(table: string, where: string, dir: 'asc' | 'desc', limit: number, offset: number) {
    const ids = await t.rows<{ id: number }>(`SELECT id FROM ${table} WHERE ${where} ORDER BY created_at ${dir}, id ${dir} LIMIT ${limit} OFFSET ${offset}`);
    const n = await t.row<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`);
    return { ids: ids.map((r) => r.id), total: n!.n };
  }

  /** Every caller × name prefix × other filter × direction × page (fewer pages for the scoped callers) against the plain query. */
  async function compareEvery(
    path: string,
    param: string,
    log: { table: string; name: string; user: string },
    texts: string[],
    extras: [Record<string, string | number>, string][],
  ) {
    for (const caller of callers) {
      for (const text of texts) {
        for (const [extra, extraWhere] of extras) {
          for (const dir of ['desc', 'asc'] as const) {
            for (const [pageNo, pageSize] of caller.label === 'super admin' ? pages : pages.slice(0, 3)) {
              const r = await t.call('POST', path, { token: caller.token, body: { params: { [param]: text, ...extra }, sortOrder: dir, pageNo, pageSize } });
              expect(r.status).toBe(200);
              const where = `${starts(log.name, text)} AND ${extraWhere} AND ${caller.scope(log.user)}`;
              const want = await plain(log.table, where, dir, pageSize, (pageNo - 1) * pageSize);
              const got = { ids: r.data.records.map((x: { id: number }) => x.id), total: r.data.total };
              expect({ who: caller.label, text, extra, dir, pageNo, pageSize, ...got }).toEqual({ who: caller.label, text, extra, dir, pageNo, pageSize, ...want });
            }
          }
        }
      }
    }
  }

  test('the seeded rows cover both plans: matches among the newest PROBE_ROWS rows or not', async () => {
    const newest = (where: string) =>
      t.row<{ n: number }>(`SELECT count(*) AS n FROM (SELECT login_name FROM login_log ORDER BY created_at DESC, id DESC LIMIT ${PROBE_ROWS}) WHERE ${where}`);
    expect((await newest(starts('login_name', 'old')))!.n).toBe(0); // all old: the sort of the matches
    expect((await newest(starts('login_name', 'mid')))!.n).toBeLessThan(10); // few: the same
    expect((await newest(starts('login_name', 'user')))!.n).toBeGreaterThan(1000); // many recent: the walk
    // 'old' has enough matches to be probed (fewer are sorted at once), 'mid' and one name fewer.
    expect((await t.row<{ n: number }>(`SELECT count(*) AS n FROM login_log WHERE ${starts('login_name', 'old')}`))!.n).toBe(OLD);
    expect(OLD).toBeGreaterThanOrEqual(SEEK_FEW);
  });

  const pages: [pageNo: number, pageSize: number][] = [[1, 10], [3, 10], [1, 100], [20, 100], [59, 10], [61, 10], [201, 10], [30, 100]];

  describe('login log', () => {
    const texts = ['old', 'OLD01', 'user', 'user1', 'mid', 'zzz'];
    const extras: [Record<string, string>, string][] = [
      [{}, '1'],
      [{ status: 'failure' }, `status = 'failure'`],
      [{ ip: '10.1.1' }, starts('ip', '10.1.1')],
      [{ createdFrom: FROM, createdTo: TO }, `created_at >= '${FROM}' AND created_at <= '${TO}'`],
    ];

    test('loginName prefix, alone and with status, ip or dates: same records, order and total as the plain query', async () => {
      await compareEvery('/app/sysLoginLog/page', 'loginName', { table: 'login_log', name: 'login_name', user: 'user_id' }, texts, extras);
    }, 120_000);

    test('ip prefix alone: both plans', async () => {
      for (const text of ['10.1.', '10.2.', '10.1.3', '10.9']) {
        for (const [pageNo, pageSize] of pages) {
          const r = await t.call('POST', '/app/sysLoginLog/page', { token: admin, body: { params: { ip: text }, pageNo, pageSize } });
          const want = await plain('login_log', starts('ip', text), 'desc', pageSize, (pageNo - 1) * pageSize);
          expect({ text, pageNo, ids: r.data.records.map((x: { id: number }) => x.id), total: r.data.total }).toEqual({ text, pageNo, ...want });
        }
      }
    });

    test('searchCount false: the same records, total 0', async () => {
      for (const text of ['old', 'user']) {
        const r = await t.call('POST', '/app/sysLoginLog/page', { token: admin, body: { params: { loginName: text }, searchCount: false } });
        expect(r.data.total).toBe(0);
        expect(r.data.records.map((x: { id: number }) => x.id)).toEqual((await plain('login_log', starts('login_name', text), 'desc', 10, 0)).ids);
      }
    });
  });

  test('every filter at once, each caller: a batch D1 accepts (expression depth 100, 100 bound values), same answer as the plain query', async () => {
    const dates = `created_at >= '${FROM}' AND created_at <= '${TO}'`;
    const cases: [string, Record<string, string | number>, string, string][] = [
      ['/app/sysLoginLog/page', { loginName: 'user1', ip: '10.2.1', status: 'success', createdFrom: FROM, createdTo: TO }, 'login_log',
        `${starts('login_name', 'user1')} AND ${starts('ip', '10.2.1')} AND status = 'success' AND ${dates}`],
      ['/app/sysLoginLog/page', { loginName: 'old', ip: '10.1.', status: 'failure', createdFrom: '2025-12-31', createdTo: '2026-01-01' }, 'login_log',
        `${starts('login_name', 'old')} AND ${starts('ip', '10.1.')} AND status = 'failure' AND created_at >= '2025-12-31T00:00:00.000Z' AND created_at <= '2026-01-01T23:59:59.999Z'`],
      ['/app/sysOpLog/page', { operatorName: 'user1', module: 'sysUser', action: 'edit', status: 200, createdFrom: FROM, createdTo: TO }, 'op_log',
        `${starts('operator_name', 'user1')} AND module = 'sysUser' AND action = 'edit' AND status = 200 AND ${dates}`],
      ['/app/sysOpLog/page', { operatorName: 'old', module: 'sysUser', action: 'edit', status: 409, createdFrom: '2025-12-31', createdTo: '2026-01-01' }, 'op_log',
        `${starts('operator_name', 'old')} AND module = 'sysUser' AND action = 'edit' AND status = 409 AND created_at >= '2025-12-31T00:00:00.000Z' AND created_at <= '2026-01-01T23:59:59.999Z'`],
    ];
    for (const caller of callers) {
      for (const [path, params, table, where] of cases) {
        for (const [pageNo, pageSize] of [[1, 10], [2, 7]]) {
          const r = await t.call('POST', path, { token: caller.token, body: { params, pageNo, pageSize } });
          expect({ who: caller.label, path, status: r.status }).toEqual({ who: caller.label, path, status: 200 });
          const want = await plain(table, `${where} AND ${caller.scope(table === 'op_log' ? 'operator_id' : 'user_id')}`, 'desc', pageSize!, (pageNo! - 1) * pageSize!);
          expect({ who: caller.label, path, some: want.total > 0 }).toEqual({ who: caller.label, path, some: true });
          expect({ who: caller.label, path, ids: r.data.records.map((x: { id: number }) => x.id), total: r.data.total }).toEqual({ who: caller.label, path, ...want });
        }
      }
    }
  });

  describe('op log', () => {
    const texts = ['old', 'OLD01', 'user', 'user1', 'mid', 'zzz'];
    const extras: [Record<string, string | number>, string][] = [
      [{}, '1'],
      [{ status: 409 }, 'status = 409'],
      [{ module: 'sysUser' }, `module = 'sysUser'`],
      [{ createdFrom: FROM, createdTo: TO }, `created_at >= '${FROM}' AND created_at <= '${TO}'`],
    ];

    test('operatorName prefix, alone and with status, module or dates: same records, order and total as the plain query', async () => {
      await compareEvery('/app/sysOpLog/page', 'operatorName', { table: 'op_log', name: 'operator_name', user: 'operator_id' }, texts, extras);
    }, 120_000);
  });
}
