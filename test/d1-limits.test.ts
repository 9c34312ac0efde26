import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sql } from 'kysely';
import { idList } from '../src/db/id-list.ts';
import { makeTestApp } from './support/app.ts';

// D1 refuses statements with more than 100 bound parameters; the Bun adapter refuses them too,
// so every module test running on Bun catches a query the Workers build would fail.
describe('D1 limits on Bun', async () => {
  const t = await makeTestApp();
  const ids = Array.from({ length: 100 }, (_, i) => i + 1);

  test('100 bound parameters pass, 101 are refused with a clear error', async () => {
    expect((await t.db.selectFrom('menus').select('id').where('id', 'in', ids).execute()).length).toBeGreaterThan(0);
    await expect(t.db.selectFrom('menus').select('id').where('id', 'in', ids).where('status', '=', 'enabled').execute()).rejects.toThrow(
      /at most 100 bound parameters per statement, got 101/,
    );
  });

  test('deps.atomic and deps.read refuse them too', async () => {
    const q = t.db.selectFrom('menus').select('id').where('id', 'in', [...ids, 101]).compile();
    await expect(t.deps.atomic([q])).rejects.toThrow(/at most 100 bound parameters/);
    await expect(t.deps.read(q.sql, q.parameters)).rejects.toThrow(/at most 100 bound parameters/);
    const ok = t.db.selectFrom('menus').select('id').where('id', 'in', ids).compile();
    expect((await t.deps.read(ok.sql, ok.parameters)).length).toBeGreaterThan(0);
  });

  test('idList binds any number of ids as one parameter', async () => {
    const many = Array.from({ length: 500 }, (_, i) => i + 1);
    const rows = await t.db.selectFrom('menus').select('id').where('id', 'in', idList(many)).where('status', '=', 'enabled').execute();
    expect(rows.length).toBe(t.count('menus'));
    const some = await t.db.selectFrom('menus').select('id').where('id', 'in', idList([2, 3, 999])).orderBy('id').execute();
    expect(some).toEqual([{ id: 2 }, { id: 3 }]);
  });

  test('multi-row insert from one JSON parameter', async () => {
    const now = new Date().toISOString();
    const role = await t.db
      .insertInto('roles')
      .values({ name: 'Bulk', code: 'bulk', status: 'enabled', remark: null, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const menuIds = Array.from({ length: 53 }, (_, i) => i + 1);
    await sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${role.id}, value FROM json_each(${JSON.stringify(menuIds)})`.execute(t.db);
    expect((t.sqlite.query('SELECT count(*) AS n FROM role_menu WHERE role_id = ?').get(role.id) as { n: number }).n).toBe(53);
  });

  test('no interactive transactions outside the Bun adapter (D1 has none; use deps.atomic)', () => {
    const src = join(import.meta.dir, '../src');
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
    const offenders = walk(src)
      .filter((f) => !relative(src, f).startsWith('adapters/bun/'))
      .filter((f) => /\.transaction\s*\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(src, f));
    expect(offenders).toEqual([]);
  });

  test('batch deletes of many menus stay within the parameter limit (was 4 parameters per id)', async () => {
    const now = new Date().toISOString();
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await t.db
        .insertInto('menus')
        .values({ parent_id: 0, title: `Bulk ${i}`, type: 'menu', path: `/bulk/${i}`, component: null, icon: null, permission: null, status: 'enabled', created_at: now, updated_at: now })
        .executeTakeFirstOrThrow();
      ids.push(Number(r.insertId));
    }
    const token = await t.login();
    const res = await t.call('POST', '/app/sysMenu/delete', { token, body: { ids } });
    expect(res.status).toBe(200);
    expect((t.sqlite.query(`SELECT count(*) AS n FROM menus WHERE title LIKE 'Bulk %'`).get() as { n: number }).n).toBe(0);
  });

  test('batch actions accept their full 100 ids on every module (100 ids + any other parameter would exceed D1)', async () => {
    const token = await t.login();
    const many = Array.from({ length: 100 }, (_, i) => 100000 + i);
    const paths = ['/app/sysFile/delete', '/app/sysImage/delete', '/app/sysLoginLog/delete', '/app/sysOpLog/delete', '/app/sysRole/delete', '/app/sysUser/delete', '/app/sysMenu/delete'];
    for (const path of paths) {
      const res = await t.call('POST', path, { token, body: { ids: many } });
      expect({ path, status: res.status === 500 ? res.json.msg : 'not 500' }).toEqual({ path, status: 'not 500' });
    }
  });
});
