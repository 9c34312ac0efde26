import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataSql, derivedTables } from '../scripts/restore-worker.ts';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { MIGRATIONS_DIR } from '../src/adapters/server/migrate.ts';
import { DERIVED_TABLES } from '../src/db/derived-tables.ts';
import { makeTestApp, perRuntime, type AnyTestApp } from './support/app.ts';
import { USER_PASSWORD, userWithCodes } from './support/rbac.ts';
import { splitSql } from './support/workerd.ts';

/*
 * org_user_counts (0010): users per organisation, kept by triggers; the users page takes its total
 * from them when it is filtered by organisations only (the caller's scope and/or `orgId`), and
 * chooses its plan (walk the sort order, or read the org index and sort) by that size. The counts
 * must equal the real ones after every kind of write, through the service or behind it, on both
 * runtimes, and a page must answer exactly what counting would, whichever plan it took.
 */

let t: AnyTestApp;
let admin: string;
let seq = 0;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

const post = async (path: string, body: unknown, token = admin) => {
  const r = await t.call('POST', path, { token, body });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json.msg}`);
  return r.data;
};
const addOrg = async (parentId?: number) => (await post('/app/sysOrg/add', { name: `o${++seq}`, code: `o${seq}`, ...(parentId ? { parentId } : {}) })).id as number;
const addUser = async (orgId: number | null) => (await post('/app/sysUser/add', { loginName: `cu${++seq}`, password: USER_PASSWORD, orgId })).id as number;
const editUser = async (id: number, orgId: number | null) => {
  const { version } = (await t.call('GET', `/app/sysUser/detail?id=${id}`, { token: admin })).data;
  await post('/app/sysUser/edit', { id, version, orgId });
};

/** The kept counts are the real ones (no row off, none negative, none missing). */
async function expectCountsExact() {
  const kept = await t.rows('SELECT org_id, n FROM org_user_counts WHERE n <> 0 ORDER BY org_id');
  const real = await t.rows('SELECT org_id, count(*) AS n FROM users WHERE org_id IS NOT NULL GROUP BY org_id ORDER BY org_id');
  expect(kept).toEqual(real);
}

/** Users `count(*)` puts under `orgId` (that org and everything below), newest first like the page's default order. */
async function usersUnder(orgId: number) {
  return (
    await t.rows<{ id: number }>(
      'SELECT id FROM users WHERE org_id IN (SELECT descendant_id FROM org_closure WHERE ancestor_id = ?) ORDER BY created_at DESC, id DESC',
      orgId,
    )
  ).map((r) => r.id);
}

/** The page answers what counting would: the same ids in the same order (the first 100), and `total` = the real count. */
async function expectPage(body: Record<string, unknown>, expected: number[], token = admin) {
  const page = await post('/app/sysUser/page', { pageSize: 100, ...body }, token);
  expect(page.records.map((r: { id: number }) => r.id)).toEqual(expected.slice(0, 100));
  expect(page.total).toBe(expected.length);
}

/** `n` users in `orgId` straight into the table, as a seed or import script would (one statement). */
async function seedUsers(orgId: number, n: number, at = '2026-01-01T00:00:00.000Z') {
  const tag = `s${++seq}_`;
  await t.exec(
    `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
     INSERT INTO users (login_name, password_hash, nick_name, org_id, created_at, updated_at)
     SELECT ? || i, 'x', 'seeded', ?, strftime('%Y-%m-%dT%H:%M:%fZ', ?, '+' || i || ' seconds'), ? FROM k`,
    n, tag, orgId, at, at,
  );
}

function suite() {
  test('add, move, clear and delete through the service keep the counts; org pages total from them', async () => {
    const a = await addOrg();
    const b = await addOrg(a);
    const c = await addOrg();
    const inA = [await addUser(a), await addUser(a), await addUser(a)];
    const inB = [await addUser(b), await addUser(b)];
    const none = await addUser(null);
    await expectCountsExact();
    expect((await t.row('SELECT n FROM org_user_counts WHERE org_id = ?', a))!.n).toBe(3);
    await expectPage({ params: { orgId: a } }, await usersUnder(a));
    expect((await usersUnder(a)).length).toBe(5);

    await editUser(inA[0]!, b); // a → b
    await editUser(inB[0]!, null); // b → none
    await editUser(none, c); // none → c
    await editUser(inA[1]!, a); // unchanged org: nothing moves
    await expectCountsExact();
    await expectPage({ params: { orgId: b } }, await usersUnder(b));
    await expectPage({ params: { orgId: c } }, [none]);

    await post('/app/sysUser/delete', { ids: [inA[1]!, inB[1]!, none] });
    await expectCountsExact();
    await expectPage({ params: { orgId: a } }, await usersUnder(a));
    await expectPage({ params: { orgId: c } }, []);
    // searchCount=false: no total, as on every page.
    const uncounted = await post('/app/sysUser/page', { params: { orgId: a }, searchCount: false });
    expect(uncounted.total).toBe(0);
    expect(uncounted.records.length).toBe((await usersUnder(a)).length);

    // An organisation without users goes, and its row with it.
    await post('/app/sysOrg/delete', { ids: [c] });
    expect(await t.rows('SELECT * FROM org_user_counts WHERE org_id = ?', c)).toEqual([]);
  });

  test('writes behind the service (a seed script, bulk moves and deletes in plain SQL) keep the counts', async () => {
    const a = await addOrg();
    const b = await addOrg(a);
    await seedUsers(b, 1200);
    await expectCountsExact();
    await t.exec('UPDATE users SET org_id = ? WHERE org_id = ? AND id % 3 = 0', a, b);
    await t.exec('UPDATE users SET nick_name = ? WHERE org_id = ?', 'renamed', a); // no org change
    await expectCountsExact();
    await t.exec('DELETE FROM users WHERE org_id = ? AND id % 2 = 0', b);
    await t.exec('UPDATE users SET org_id = NULL WHERE org_id = ? AND id % 5 = 0', a);
    await expectCountsExact();
    await expectPage({ params: { orgId: a } }, await usersUnder(a));
    await expectPage({ params: { orgId: b } }, await usersUnder(b));
  });

  test("a broad scope's page (walk plan, then the caller's plan hint) answers what counting would, as the scope changes", async () => {
    const top = await addOrg();
    const broad = await addOrg(top);
    const narrow = await addOrg(top);
    await seedUsers(broad, 1100); // ≥ 1,000: the walk plan
    await seedUsers(narrow, 30, '2026-02-01T00:00:00.000Z');
    const caller = await userWithCodes(t, admin, ['sys:user:page']);
    await t.exec(`UPDATE roles SET data_scope = 'orgAndBelow' WHERE id = ?`, caller.roleId);
    await t.exec('UPDATE users SET org_id = ? WHERE id = ?', broad, caller.userId);
    const firstPage = async (orgId: number, body: Record<string, unknown> = {}) => {
      const all = await usersUnder(orgId);
      const page = await post('/app/sysUser/page', body, caller.token);
      expect(page.total).toBe(all.length);
      return { page, all };
    };
    for (let i = 0; i < 2; i++) {
      // The first request has no hint (the `all` page goes out first), the second uses it.
      const { page, all } = await firstPage(broad);
      expect(page.records.map((r: { id: number }) => r.id)).toEqual(all.slice(0, 10));
    }
    // Another order and a later page, on the walk plan.
    const byName = (await t.rows<{ id: number }>('SELECT id FROM users WHERE org_id = ? ORDER BY login_name ASC, id ASC LIMIT 20 OFFSET 20', broad)).map((r) => r.id);
    expect((await post('/app/sysUser/page', { sortField: 'loginName', sortOrder: 'asc', pageNo: 2, pageSize: 20 }, caller.token)).records.map((r: { id: number }) => r.id)).toEqual(byName);

    // Moved to a narrow organisation: the hint (walk) misses; the page is still exact, twice.
    await t.exec('UPDATE users SET org_id = ? WHERE id = ?', narrow, caller.userId);
    for (let i = 0; i < 2; i++) {
      const { page, all } = await firstPage(narrow, { pageSize: 100 });
      expect(page.records.map((r: { id: number }) => r.id)).toEqual(all);
    }
    // Now scope `all`: every user.
    await t.exec(`UPDATE roles SET data_scope = 'all' WHERE id = ?`, caller.roleId);
    const everyone = (await t.row<{ n: number }>('SELECT count(*) AS n FROM users'))!.n;
    expect((await post('/app/sysUser/page', {}, caller.token)).total).toBe(everyone);
    // Then `self`: the caller alone.
    await t.exec(`UPDATE roles SET data_scope = 'self' WHERE id = ?`, caller.roleId);
    await expectPage({}, [caller.userId], caller.token);
    // Back to the broad branch: exact again.
    await t.exec(`UPDATE roles SET data_scope = 'orgAndBelow' WHERE id = ?`, caller.roleId);
    await t.exec('UPDATE users SET org_id = ? WHERE id = ?', broad, caller.userId);
    const { page, all } = await firstPage(broad);
    expect(page.records.map((r: { id: number }) => r.id)).toEqual(all.slice(0, 10));
    // A super admin filtering by the branch (the orgId plan chosen in SQL) agrees.
    await expectPage({ params: { orgId: broad } }, all);
    await expectCountsExact();
    // Any other filter counts its matches, not the organisations' users.
    await t.exec(`UPDATE users SET status = 'disabled' WHERE org_id = ? AND id % 4 = 0`, broad);
    const disabled = (await t.rows<{ id: number }>(`SELECT id FROM users WHERE org_id = ? AND status = 'disabled' ORDER BY created_at DESC, id DESC`, broad)).map((r) => r.id);
    expect(disabled.length).toBeGreaterThan(200);
    await expectPage({ params: { status: 'disabled' } }, disabled, caller.token);
    await expectPage({ params: { status: 'disabled', orgId: broad } }, disabled, caller.token);
    await expectPage({ params: { status: 'disabled', orgId: broad } }, disabled);
  });

  test("restore --to worker's load rebuilds the counts instead of replaying them (no double count)", async () => {
    // The source: a Bun install with users in organisations.
    const source = await makeTestApp();
    const sourceAdmin = await source.login();
    const org = (await source.call('POST', '/app/sysOrg/add', { token: sourceAdmin, body: { name: 'R', code: 'r' } })).data.id as number;
    for (let i = 0; i < 3; i++) {
      expect((await source.call('POST', '/app/sysUser/add', { token: sourceAdmin, body: { loginName: `ru${i}`, password: USER_PASSWORD, orgId: org } })).status).toBe(200);
    }
    source.sqlite.run('UPDATE users SET org_id = NULL WHERE login_name = ?', ['ru2']); // leaves its org at 2
    const { sql, counts } = dataSql(source.sqlite);
    expect(counts.org_user_counts).toBe(1);
    // The target (this runtime's app) already holds users in organisations: --replace.
    const target = await addOrg();
    await seedUsers(target, 5);
    const app = t;
    if (app.runtime === 'd1') await app.d1.batch(splitSql(sql).map((q) => app.d1.prepare(q)));
    else app.sqlite.run(sql);
    expect(await t.rows('SELECT org_id, n FROM org_user_counts ORDER BY org_id')).toEqual([{ org_id: org, n: 2 }]);
    await expectCountsExact();
  });
}

describe('org_user_counts outside the request path (bun:sqlite)', () => {
  test('migrating a database that already has users in organisations builds their counts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'org-counts-'));
    try {
      for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0010')) cpSync(join(MIGRATIONS_DIR, f), join(dir, f));
      const db = new Database(':memory:');
      migrate(db, dir);
      db.run(`INSERT INTO orgs (id, name, code, created_at, updated_at) VALUES (7, 'o', 'o', 'x', 'x')`);
      db.run(`INSERT INTO users (login_name, password_hash, org_id, created_at, updated_at) VALUES ('a', 'x', 7, 'x', 'x'), ('b', 'x', 7, 'x', 'x'), ('c', 'x', NULL, 'x', 'x')`);
      migrate(db);
      expect(db.query('SELECT org_id, n FROM org_user_counts').all()).toEqual([{ org_id: 7, n: 2 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every table a trigger writes is listed as derived (so a replay of rows rebuilds it, never loads it)', async () => {
    const app = await makeTestApp();
    const triggers = app.sqlite.query(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`).all() as { name: string; sql: string }[];
    for (const name of ['orgs_user_count_delete', 'users_org_count_delete', 'users_org_count_insert', 'users_org_count_move']) expect(triggers.map((r) => r.name)).toContain(name);
    const written = new Set(triggers.flatMap((r) => [...r.sql.slice(r.sql.search(/\bBEGIN\b/i)).matchAll(/\b(?:INSERT\s+INTO|(?<!DO\s+)UPDATE|DELETE\s+FROM)\s+["`]?(\w+)/gi)].map((m) => m[1]!)));
    const skipped = derivedTables(app.sqlite);
    expect(written.has('org_user_counts')).toBe(true);
    expect([...written].filter((table) => !Object.hasOwn(DERIVED_TABLES, table) && !skipped.has(table.toLowerCase()))).toEqual([]);
  });
});
