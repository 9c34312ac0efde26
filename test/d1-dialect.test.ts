import { describe, expect, test } from 'bun:test';
import { CompiledQuery, Kysely, sql } from 'kysely';
import { createApp } from '../src/app.ts';
import { configWith } from '../src/config.ts';
import { jsonLogger } from '../src/core/log.ts';
import type { Database } from '../src/db/schema.ts';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import { MAX_BOUND_PARAMS } from '../src/core/ports.ts';
import { D1Dialect, d1Atomic, toD1Values } from '../src/adapters/workers/d1-dialect.ts';
import { workersDeps } from '../src/adapters/workers/deps.ts';
import { bootstrapAdmin } from '../src/modules/users/bootstrap.ts';
import { ADMIN_PASSWORD, fastHasher } from './support/app.ts';
import { d1Shim } from './support/d1-shim.ts';

function setup() {
  const sqlite = openSqlite(':memory:');
  migrate(sqlite);
  const d1 = d1Shim(sqlite);
  const db = new Kysely<Database>({ dialect: new D1Dialect(d1) });
  return { sqlite, d1, db, atomic: d1Atomic(d1) };
}

describe('D1 dialect', () => {
  test('maps rows, affected rows and insert ids the way Kysely expects', async () => {
    const { db } = setup();
    const now = new Date().toISOString();
    const ins = await db
      .insertInto('roles')
      .values({ name: 'Auditor', code: 'auditor', status: 'enabled', remark: null, created_at: now, updated_at: now })
      .executeTakeFirstOrThrow();
    expect(typeof ins.insertId).toBe('bigint');
    const id = Number(ins.insertId);
    const role = await db.selectFrom('roles').select(['id', 'code']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(role).toEqual({ id, code: 'auditor' });
    const upd = await db.updateTable('roles').set({ remark: 'x' }).where('code', 'in', ['auditor', 'nobody']).executeTakeFirst();
    expect(upd.numUpdatedRows).toBe(1n);
    const returned = await db.deleteFrom('roles').where('id', '=', id).returning(['code']).execute();
    expect(returned).toEqual([{ code: 'auditor' }]);
    const none = await db.deleteFrom('roles').where('id', '=', id).executeTakeFirst();
    expect(none.numDeletedRows).toBe(0n);
  });

  test('passes D1-compatible parameter values', () => {
    expect(toD1Values('x', [undefined, null, true, false, 5n, 'a', 1.5])).toEqual([null, null, 1, 0, 5, 'a', 1.5]);
    expect(toD1Values('x', [new Uint8Array([1, 2])])[0]).toBeInstanceOf(ArrayBuffer);
  });

  test('refuses statements over the 100-parameter limit before they reach D1', async () => {
    const { db, d1 } = setup();
    const ids = Array.from({ length: MAX_BOUND_PARAMS }, (_, i) => i + 1);
    await db.selectFrom('menus').select('id').where('id', 'in', ids).execute();
    const sent = d1.statements.length;
    await expect(db.selectFrom('menus').select('id').where('id', 'in', [...ids, 101]).where('status', '=', 'enabled').execute()).rejects.toThrow(
      /at most 100 bound parameters/,
    );
    expect(d1.statements.length).toBe(sent);
  });

  test('has no interactive transactions', async () => {
    const { db } = setup();
    await expect(db.transaction().execute(async () => 1)).rejects.toThrow(/deps.atomic/);
  });

  test('atomic runs a batch all-or-nothing and reports each result', async () => {
    const { db, atomic, sqlite } = setup();
    const now = new Date().toISOString();
    const role = (code: string) =>
      db.insertInto('roles').values({ name: code, code, status: 'enabled', remark: null, created_at: now, updated_at: now }).compile();
    const before = (sqlite.query('SELECT count(*) AS n FROM roles').get() as { n: number }).n;
    await expect(atomic([role('a1'), role('a1')])).rejects.toThrow();
    expect((sqlite.query('SELECT count(*) AS n FROM roles').get() as { n: number }).n).toBe(before);
    const results = await atomic([role('a2'), db.updateTable('roles').set({ sort: 3 }).where('code', '=', 'a2').compile()]);
    expect(results[0]!.insertId).toBeGreaterThan(0n);
    expect(results[1]!.numAffectedRows).toBe(1n);
    expect(await atomic([])).toEqual([]);
    const raw = await db.executeQuery<{ n: number }>(CompiledQuery.raw('SELECT ? + ? AS n', [1, 2]));
    expect(raw.rows).toEqual([{ n: 3 }]);
    expect((await sql<{ v: string }>`SELECT ${'x'} AS v`.execute(db)).rows).toEqual([{ v: 'x' }]);
  });

  test('the app runs over the D1 dialect: bootstrap, login, profile write with op log, logout', async () => {
    const { d1, sqlite } = setup();
    // The Worker's own deps factory over the shim (CF-Connecting-IP, no R2), with a cheap hasher.
    const deps = workersDeps(
      { config: configWith({ CAPTCHA_ENABLED: 'false', ADMIN_PASSWORD, LOG_REQUESTS: 'false' }), d1, secret: 'test-secret-test-secret-test-secret-0123' },
      { hasher: fastHasher(), log: jsonLogger('error', () => {}) },
    );
    expect((await bootstrapAdmin(deps)).created).toBe(true);
    const app = createApp(deps);
    const headers = { 'content-type': 'application/json', 'cf-connecting-ip': '203.0.113.9' };
    const login = await app.request('/auth/login', { method: 'POST', headers, body: JSON.stringify({ loginName: 'admin', password: ADMIN_PASSWORD }) });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as any).data.token as string;
    const auth = { ...headers, authorization: `Bearer ${token}` };
    const upd = await app.request('/app/sysLoginUser/updateInfo', { method: 'POST', headers: auth, body: JSON.stringify({ nickName: 'Root' }) });
    expect(upd.status).toBe(200);
    const op = sqlite.query("SELECT action, status, ip FROM op_log WHERE module = 'sysLoginUser'").all();
    expect(op).toEqual([{ action: 'updateInfo', status: 200, ip: '203.0.113.9' }]);
    const log = sqlite.query('SELECT ip, status FROM login_log').all();
    expect(log).toEqual([{ ip: '203.0.113.9', status: 'success' }]);
    expect((await app.request('/auth/logout', { method: 'POST', headers: auth })).status).toBe(200);
    expect((await app.request('/app/sysLoginUser/getLoginUserInformation', { headers: auth })).status).toBe(401);
  });
});
