import { beforeAll, describe, expect, test } from 'bun:test';
import type { D1Database, D1PreparedStatement } from '../src/adapters/workers/bindings.ts';
import { D1_START_MS, makeTestApp, type D1TestApp } from './support/app.ts';

/*
 * On Workers, D1's own "database full" errors answer 507 (the write refused whole, reads still
 * working) and its "overloaded" error 503 + Retry-After, through the same ClassifyError port and
 * error mapper as the server's SQLITE_FULL / SQLITE_BUSY (test/ops-http.test.ts). The app runs on
 * a real D1 database in workerd behind a binding that, on cue, makes every write throw the error
 * exactly as the D1 binding does: a plain Error "D1_ERROR: <text>" whose cause carries the text.
 */

const WRITE = /^\s*(insert|update|delete|replace)\b/i;

/** A D1 binding that passes everything to `real`, except that while a fault is set every write (alone or in a batch) throws it. */
function faultyD1(real: D1Database) {
  let fault: (() => Error) | undefined;
  const realOf = new WeakMap<object, D1PreparedStatement>();
  const sqlOf = new WeakMap<object, string>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === 'bind') return (...values: unknown[]) => wrap((target.bind as (...v: unknown[]) => D1PreparedStatement)(...values), sql);
        if (typeof prop === 'string' && ['run', 'all', 'first', 'raw'].includes(prop) && fault && WRITE.test(sql)) {
          const f = fault;
          return async () => {
            throw f();
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    realOf.set(proxy, stmt);
    sqlOf.set(proxy, sql);
    return proxy;
  };
  const d1 = new Proxy(real, {
    get(target, prop) {
      if (prop === 'prepare') return (sql: string) => wrap(target.prepare(sql), sql);
      if (prop === 'batch') {
        return async (stmts: D1PreparedStatement[]) => {
          if (fault && stmts.some((s) => WRITE.test(sqlOf.get(s) ?? ''))) throw fault();
          return target.batch(stmts.map((s) => realOf.get(s) ?? s));
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { d1, failWith: (f: (() => Error) | undefined) => void (fault = f) };
}

/** An error as the D1 binding throws it. */
const d1Error = (text: string) => () => new Error(`D1_ERROR: ${text}`, { cause: new Error(text) });

let t: D1TestApp;
let faulty: ReturnType<typeof faultyD1>;
let token: string;
beforeAll(async () => {
  t = await makeTestApp({ runtime: 'd1', wrapD1: (real) => (faulty = faultyD1(real)).d1 });
  token = await t.login();
}, D1_START_MS);

const addUser = (loginName: string) => t.call('POST', '/app/sysUser/add', { token, body: { loginName, nickName: 'Full', password: 'Storage-Full-2026' } });

describe('D1 storage errors on Workers', () => {
  for (const text of ['Exceeded maximum DB size', 'Exceeded maximum DB size.', 'database or disk is full: SQLITE_FULL']) {
    test(`"D1_ERROR: ${text}" → 507, the write refused whole, reads still answer`, async () => {
      const users = await t.count('users');
      const opLog = await t.count('op_log');
      faulty.failWith(d1Error(text));
      try {
        const r = await addUser(`full${users}`);
        expect(r.status).toBe(507);
        expect(r.json).toMatchObject({ status: 507, msg: 'Storage is full: the change was not saved', data: null });
        expect(r.json.traceId).toBeString();
        expect(await t.count('users')).toBe(users);
        expect(await t.count('op_log')).toBe(opLog);
        const page = await t.call('POST', '/app/sysUser/page', { token, body: {} });
        expect(page.status).toBe(200);
        expect(page.data.total).toBe(users);
        // Logging in writes a session: refused the same way, with no half-made session.
        const sessions = await t.count('sessions');
        const login = await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42' } });
        expect(login.status).toBe(507);
        expect(await t.count('sessions')).toBe(sessions);
      } finally {
        faulty.failWith(undefined);
      }
      expect((await addUser(`room${users}`)).status).toBe(200); // room again: writes work
    });
  }

  test('"D1_ERROR: D1 DB is overloaded. Too many requests queued." → 503 + Retry-After, nothing written', async () => {
    const users = await t.count('users');
    faulty.failWith(d1Error('D1 DB is overloaded. Too many requests queued.'));
    try {
      const r = await addUser('overloaded');
      expect(r.status).toBe(503);
      expect(r.res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await t.count('users')).toBe(users);
    } finally {
      faulty.failWith(undefined);
    }
  });

  test('any other D1 error stays a 500 that shows nothing of it (not "full": a blip must not read as "buy storage")', async () => {
    faulty.failWith(d1Error('Network connection lost.'));
    try {
      const r = await addUser('blip');
      expect(r.status).toBe(500);
      expect(r.json.msg).toBe('Internal server error');
      expect(JSON.stringify(r.json)).not.toContain('Network');
    } finally {
      faulty.failWith(undefined);
    }
  });
});
