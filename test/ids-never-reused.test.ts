import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, MIGRATIONS_DIR } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import type { D1Database } from '../src/adapters/workers/bindings.ts';
import { D1_START_MS, makeTestApp, RUNTIMES } from './support/app.ts';
import { freshD1, migrateD1 } from './support/workerd.ts';

// Users, roles and menus never hand an id out twice (0005_ids_never_reused.sql): a new record
// must not inherit a deleted one's log rows, files or grants.

// Exactly 0005 on top of what came before it (later migrations seed rows of their own).
const BEFORE_0005 = (name: string) => name < '0005';
const ONLY_0005 = (name: string) => name.startsWith('0005_');

/** Data a live database may hold before 0005: grants, sessions, and traces of a deleted user 9. */
const SEED = [
  `INSERT INTO users (id, login_name, password_hash, nick_name, status, version, created_at, updated_at, last_login_ip)
     VALUES (2, 'alice', 'h2', 'Alice', 'enabled', 3, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '10.0.0.2'),
            (3, 'bob', 'h3', 'Bob', 'disabled', 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', NULL)`,
  `INSERT INTO roles (id, name, code, sort, status, version, created_at, updated_at)
     VALUES (2, 'Auditor', 'auditor', 5, 'enabled', 2, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  `INSERT INTO menus (id, parent_id, title, type, permission, sort) VALUES (60, 29, 'Reports', 'menu', NULL, 9)`,
  `INSERT INTO user_role (user_id, role_id) VALUES (2, 2), (3, 2)`,
  `INSERT INTO role_menu (role_id, menu_id) VALUES (2, 43), (2, 47), (2, 60)`,
  `INSERT INTO sessions (id, user_id, ip, login_at, expires_at) VALUES ('s-alice', 2, '10.0.0.2', '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z')`,
  `INSERT INTO login_log (login_name, user_id, status, msg, created_at) VALUES ('gone', 9, 'success', 'Login succeeded', '2026-01-01T00:00:00.000Z')`,
];
const TABLES = ['users', 'roles', 'menus', 'user_role', 'role_menu', 'sessions', 'login_log'];
const dump = async (rows: (sql: string) => Promise<unknown[]>) =>
  Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await rows(`SELECT * FROM ${t} ORDER BY 1, 2`)] as const)));

describe('0005 rebuilds users, roles and menus with AUTOINCREMENT and loses nothing', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test('bun:sqlite (the server migrator), foreign keys on', async () => {
    const early = mkdtempSync(join(tmpdir(), 'mig-0005-'));
    dirs.push(early);
    for (const f of readdirSync(MIGRATIONS_DIR).filter(BEFORE_0005)) copyFileSync(join(MIGRATIONS_DIR, f), join(early, f));
    const sqlite = openSqlite(':memory:');
    migrate(sqlite, early);
    // The same folder plus 0005: the migrator applies only what is new.
    for (const f of readdirSync(MIGRATIONS_DIR).filter(ONLY_0005)) copyFileSync(join(MIGRATIONS_DIR, f), join(early, f));
    for (const q of SEED) sqlite.run(q);
    const rows = async (q: string) => sqlite.query(q).all();
    const before = await dump(rows);
    expect(migrate(sqlite, early)).toEqual(['0005_ids_never_reused.sql']);
    expect(await dump(rows)).toEqual(before);
    expect(sqlite.query('PRAGMA foreign_key_check').all()).toEqual([]);
    expect(sqlite.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 });
    // The next user comes after the deleted user 9 that the login log still names.
    const next = sqlite.query(`INSERT INTO users (login_name, password_hash, created_at, updated_at) VALUES ('carol', 'h', '', '') RETURNING id`).get();
    expect(next).toEqual({ id: 10 });
    const role = sqlite.query(`INSERT INTO roles (name, code, created_at, updated_at) VALUES ('R', 'r', '', '') RETURNING id`).get();
    expect(role).toEqual({ id: 3 });
  });

  test('a database that already applied a later migration refuses 0005 instead of losing columns', async () => {
    const early = mkdtempSync(join(tmpdir(), 'mig-0005-late-'));
    dirs.push(early);
    for (const f of readdirSync(MIGRATIONS_DIR).filter(BEFORE_0005)) copyFileSync(join(MIGRATIONS_DIR, f), join(early, f));
    const sqlite = openSqlite(':memory:');
    migrate(sqlite, early);
    for (const q of SEED) sqlite.run(q);
    sqlite.run(`INSERT INTO d1_migrations (name) VALUES ('0006_later.sql')`);
    const before = await dump(async (q) => sqlite.query(q).all());
    for (const f of readdirSync(MIGRATIONS_DIR).filter(ONLY_0005)) copyFileSync(join(MIGRATIONS_DIR, f), join(early, f));
    expect(() => migrate(sqlite, early)).toThrow(/apply_0005_before_later_migrations/);
    expect(await dump(async (q) => sqlite.query(q).all())).toEqual(before);
  });

  test('D1 in workerd (batch per file, as wrangler applies it)', async () => {
    const d1: D1Database = await freshD1(BEFORE_0005);
    for (const q of SEED) await d1.prepare(q).run();
    const rows = async (q: string) => (await d1.prepare(q).all()).results ?? [];
    const before = await dump(rows);
    await migrateD1(d1, ONLY_0005);
    expect(await dump(rows)).toEqual(before);
    expect(await rows('PRAGMA foreign_key_check')).toEqual([]);
    const next = await d1.prepare(`INSERT INTO users (login_name, password_hash, created_at, updated_at) VALUES ('carol', 'h', '', '') RETURNING id`).all();
    expect(next.results).toEqual([{ id: 10 }]);
  }, D1_START_MS);
});

for (const runtime of RUNTIMES) {
  describe(`a deleted record's id is never given out again (${runtime})`, () => {
    test('users, roles, menus: delete the newest, add another → a new id', async () => {
      const t = await makeTestApp({ runtime });
      const token = await t.login();
      const post = async (path: string, body: unknown) => {
        const r = await t.call('POST', path, { token, body });
        expect({ path, status: r.status, msg: r.json.msg }).toEqual({ path, status: 200, msg: 'SUCCESS' });
        return r.data;
      };
      const kinds: [string, (i: number) => unknown][] = [
        ['sysUser', (i) => ({ loginName: `reuse${i}`, password: 'Reuse-Check-Pass-7' })],
        ['sysRole', (i) => ({ name: `Reuse ${i}`, code: `reuse${i}` })],
        ['sysMenu', (i) => ({ parentId: 0, title: `Reuse ${i}`, type: 'directory' })],
      ];
      for (const [module, body] of kinds) {
        const first = (await post(`/app/${module}/add`, body(1))).id as number;
        await post(`/app/${module}/delete`, { ids: [first] });
        const second = (await post(`/app/${module}/add`, body(2))).id as number;
        expect({ module, fresh: second > first }).toEqual({ module, fresh: true });
      }
    }, D1_START_MS);
  });
}
