import { beforeAll, describe, expect, test } from 'bun:test';
import { DEFERRED_JOIN_OFFSET } from '../src/core/pagination.ts';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';

/*
 * Deep pages (offset >= DEFERRED_JOIN_OFFSET) first pick their ids over the sort index, then read
 * those rows. They must return exactly what OFFSET over the whole order returns: same rows, same
 * order (ties on the sort field broken by id), same filters, for logs and for users (whose page
 * joins orgs), on bun:sqlite and on D1.
 */

// Enough that a filter keeping a third of the rows still reaches past the threshold.
const ROWS = 3 * DEFERRED_JOIN_OFFSET + 500;

for (const runtime of RUNTIMES) {
  describe(`deep pages (${runtime})`, () => {
    let t: AnyTestApp;
    let token: string;
    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      token = await t.login();
      // Many rows share a created_at (ties) and a login name, so the id tiebreak matters.
      await t.exec(`INSERT INTO login_log (login_name, user_id, status, msg, ip, user_agent, browser, os, trace_id, created_at)
        WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${ROWS})
        SELECT 'user' || (i % 37), NULL, CASE WHEN i % 3 = 0 THEN 'failure' ELSE 'success' END, 'm', '10.0.' || (i % 11) || '.1', 'ua', 'b', 'o', 't' || i,
               '2026-11-' || printf('%02d', 1 + i % 20) || 'T00:00:00.000Z' FROM k`);
      await t.exec(`INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at)
        WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${ROWS})
        SELECT 'deep' || i, '!', 'Deep ' || (i % 50), 'enabled', '2026-10-' || printf('%02d', 1 + i % 28) || 'T00:00:00.000Z', '2026-10-01T00:00:00.000Z' FROM k`);
    }, D1_START_MS);

    const page = (path: string, body: Record<string, unknown>) => t.call('POST', path, { token, body: { pageSize: 100, ...body } });

    const cases: [string, string, Record<string, unknown>, string][] = [
      ['login log, newest first', '/app/sysLoginLog/page', {}, `SELECT id FROM login_log ORDER BY created_at DESC, id DESC`],
      ['login log, status failure, sort loginName asc', '/app/sysLoginLog/page', { params: { status: 'failure' }, sortField: 'loginName', sortOrder: 'asc' },
        `SELECT id FROM login_log WHERE status = 'failure' ORDER BY login_name COLLATE NOCASE ASC, id ASC`],
      ['users (joined with orgs), sort nickName', '/app/sysUser/page', { sortField: 'nickName' }, `SELECT id FROM users ORDER BY nick_name DESC, id DESC`],
    ];
    for (const [name, path, body, sql] of cases) {
      test(`${name}: a page past ${DEFERRED_JOIN_OFFSET} rows holds what OFFSET over the whole order holds`, async () => {
        const all = (await t.rows<{ id: number }>(sql)).map((r) => r.id);
        const deepNo = Math.floor(DEFERRED_JOIN_OFFSET / 100) + 1;
        expect((deepNo - 1) * 100).toBeGreaterThanOrEqual(DEFERRED_JOIN_OFFSET);
        expect(all.length).toBeGreaterThan(deepNo * 100 - 100);
        const r = await page(path, { ...body, pageNo: deepNo });
        expect(r.status).toBe(200);
        expect(r.data.records.map((x: { id: number }) => x.id)).toEqual(all.slice((deepNo - 1) * 100, deepNo * 100));
        expect(r.data.total).toBe(all.length);
        // And the page just before the threshold (plain OFFSET) joins up with it.
        const before = await page(path, { ...body, pageNo: deepNo - 1 });
        expect(before.data.records.map((x: { id: number }) => x.id)).toEqual(all.slice((deepNo - 2) * 100, (deepNo - 1) * 100));
      });
    }
  });
}
