import { beforeAll, describe, expect, test } from 'bun:test';
import { CompiledQuery } from 'kysely';
import { D1_START_MS, makeTestApp, type D1TestApp } from './support/app.ts';

// deps.atomic on a REAL D1 (workerd through Miniflare): the statements of one write go in one
// DB.batch(), which D1 runs as one transaction. The shim in test/support/d1-shim.ts makes its batch
// a bun:sqlite transaction, so only this file shows that our adapter really hands D1 one batch: a
// d1Atomic that ran the statements one by one (or one batch each) leaves the first writes behind here.

let t: D1TestApp;
let admin: string;
beforeAll(async () => {
  t = await makeTestApp({ runtime: 'd1' });
  admin = await t.login();
}, D1_START_MS);

const now = () => new Date(t.clock.now()).toISOString();
const insertRole = (code: string) =>
  t.db.insertInto('roles').values({ name: code, code, status: 'enabled', remark: null, created_at: now(), updated_at: now() }).compile();
const roleCodes = async () => (await t.rows<{ code: string }>('SELECT code FROM roles ORDER BY id')).map((r) => r.code);
/** A guard statement as services end their batches with: it fails when the rule is broken (see 0002_guard_failures.sql). */
const staleVersionGuard = CompiledQuery.raw("INSERT INTO guard_failures (rule) SELECT 'stale_version' WHERE 1 = 1", []);

test('the migrations build the same schema on D1 as on bun:sqlite', async () => {
  const bun = await makeTestApp();
  // Compared without comments and line breaks (the D1 path sends statements without comments).
  const schema = async (app: { rows: D1TestApp['rows'] }) =>
    (await app.rows<{ name: string; sql: string | null }>("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite_%' ORDER BY name")).map((r) => ({
      ...r,
      sql: r.sql?.replace(/--[^\n]*/g, '').replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim(),
    }));
  const d1 = await schema(t);
  expect(d1.length).toBeGreaterThan(10);
  expect(d1).toEqual(await schema(bun));
  for (const table of ['menus', 'roles', 'role_menu']) expect(await t.count(table)).toBe(bun.count(table));
  expect(await t.rows('SELECT name FROM d1_migrations ORDER BY id')).toEqual(await bun.rows('SELECT name FROM d1_migrations ORDER BY id'));
});

describe('deps.atomic on real D1 is all-or-nothing', () => {
  test('runs on workerd, not on the shim', async () => {
    expect(t.runtime).toBe('d1');
    // D1 reports where a statement ran; bun:sqlite and the shim have no such field.
    const res = await t.d1.prepare('SELECT 1 AS one').all();
    expect((res.meta as Record<string, unknown>).served_by).toBeString();
  });

  test('a unique violation in the last statement leaves none of the earlier writes', async () => {
    const before = await roleCodes();
    await expect(t.deps.atomic([insertRole('atomic_a'), insertRole('atomic_b'), insertRole('atomic_a')])).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await roleCodes()).toEqual(before);
  });

  test('a failing guard at the end rolls back the update and insert before it', async () => {
    const before = await t.rows('SELECT * FROM roles ORDER BY id');
    const update = t.db.updateTable('roles').set({ remark: 'changed by a refused batch' }).where('id', '=', 1).compile();
    await expect(t.deps.atomic([update, insertRole('atomic_guarded'), staleVersionGuard])).rejects.toThrow(/guard_stale_version/);
    expect(await t.rows('SELECT * FROM roles ORDER BY id')).toEqual(before);
  });

  test('a batch that passes applies every statement and reports each result', async () => {
    const results = await t.deps.atomic([
      insertRole('atomic_ok'),
      t.db.updateTable('roles').set({ sort: 3 }).where('code', '=', 'atomic_ok').compile(),
      t.db.selectFrom('roles').select('code').where('code', '=', 'atomic_ok').compile(),
    ]);
    expect(results[0]!.insertId).toBeGreaterThan(0n);
    expect(results[1]!.numAffectedRows).toBe(1n);
    expect(results[2]!.rows).toEqual([{ code: 'atomic_ok' }]);
    expect(await t.row('SELECT sort FROM roles WHERE code = ?', 'atomic_ok')).toEqual({ sort: 3 });
  });

  test('through HTTP: a user add whose role grant fails leaves no user behind', async () => {
    const users = await t.count('users');
    const r = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'half_written', password: 'Valid-Passw0rd-9', roleIds: [1, 987654] } });
    expect(r.status).toBe(400);
    expect(await t.count('users')).toBe(users);
    expect(await t.row("SELECT id FROM users WHERE login_name = 'half_written'")).toBeNull();
  });
});
