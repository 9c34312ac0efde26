import { describe, expect, test } from 'bun:test';
import { Kysely } from 'kysely';
import { createApp } from '../src/app.ts';
import { D1Dialect, d1Atomic, d1Read } from '../src/adapters/workers/d1-dialect.ts';
import type { D1Database } from '../src/adapters/workers/bindings.ts';
import type { Database } from '../src/db/schema.ts';
import { d1Shim } from './support/d1-shim.ts';
import { makeTestApp } from './support/app.ts';

/** `db;dur=1.2;desc="1 rt, 3 calls"` → { dur: 1.2, rt: 1, calls: 3 } (calls = rt when omitted) */
function dbTiming(res: Response) {
  const h = res.headers.get('server-timing') ?? '';
  const m = h.match(/(?:^|,\s*)db;dur=([\d.]+);desc="(\d+) rt(?:, (\d+) calls)?"/);
  if (!m) throw new Error(`no db entry in Server-Timing: "${h}"`);
  return { dur: Number(m[1]), rt: Number(m[2]), calls: Number(m[3] ?? m[2]) };
}

describe('Server-Timing', async () => {
  const t = await makeTestApp();
  const admin = await t.login();

  test('every response carries db time and round trips, errors included', async () => {
    expect(dbTiming((await t.call('GET', '/health')).res)).toEqual({ dur: 0, rt: 0, calls: 0 });
    const r = await t.call('GET', '/app/sysUser/detail?id=1', { token: admin });
    expect(r.status).toBe(200);
    expect(dbTiming(r.res).rt).toBeGreaterThan(0);
    const anon = await t.call('GET', '/app/sysUser/detail?id=1');
    expect(anon.status).toBe(401);
    expect(dbTiming(anon.res).rt).toBe(0);
    const missing = await t.call('GET', '/nope');
    expect(missing.status).toBe(404);
    expect(dbTiming(missing.res)).toEqual({ dur: 0, rt: 0, calls: 0 });
  });

  test('SERVER_TIMING=false leaves the header out', async () => {
    const off = await makeTestApp({ env: { SERVER_TIMING: 'false' } });
    const r = await off.call('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.res.headers.get('server-timing')).toBeNull();
  });

  test("the calls counted equal the calls the D1 binding sees (the runner's reads and batches)", async () => {
    // The same app over the D1 adapter, with the binding's calls counted from outside the app.
    const shim = d1Shim(t.sqlite);
    let calls = 0;
    const counting: D1Database = {
      prepare: (sql) => {
        const wrap = (s: ReturnType<D1Database['prepare']>): ReturnType<D1Database['prepare']> => ({
          ...s, // the shim's own batch runs its statements through a private method
          bind: (...v) => wrap(s.bind(...v)),
          all: () => (calls++, s.all()),
          run: () => (calls++, s.run()),
        });
        return wrap(shim.prepare(sql));
      },
      batch: (stmts) => (calls++, shim.batch(stmts)),
    };
    const app = createApp({ ...t.deps, db: new Kysely<Database>({ dialect: new D1Dialect(counting) }), atomic: d1Atomic(counting), read: d1Read(counting), readNow: undefined, readManyNow: undefined });
    const send = (method: string, path: string, body?: unknown) =>
      app.request(path, {
        method,
        headers: { authorization: `Bearer ${admin}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    for (const [method, path, body] of [
      ['GET', '/app/sysUser/detail?id=1'],
      ['POST', '/app/sysUser/page', {}],
      ['GET', '/app/sysLoginUser/getLoginUserInformation'],
      ['POST', '/app/sysUser/add', { loginName: 'timed', password: 'Timed-Pass-42-x' }],
      ['POST', '/app/sysRole/page', {}],
    ] as const) {
      calls = 0;
      const res = await send(method, path, body);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()} ${t.logLines.slice(-2).join('\n')}`);
      const timing = dbTiming(res);
      expect({ path, calls: timing.calls }).toEqual({ path, calls });
      expect(timing.rt).toBeGreaterThan(0);
      expect(timing.rt).toBeLessThanOrEqual(calls);
    }
  });
});

describe('DbMeter', () => {
  test('calls in flight together are one round trip; calls one after another are one each', async () => {
    const { DbMeter } = await import('../src/db/meter.ts');
    const m = new DbMeter();
    const io = () => new Promise((ok) => setTimeout(ok, 1));
    await m.time(io);
    await Promise.all([m.time(io), m.time(io), m.time(io)]);
    await m.time(io);
    expect({ trips: m.trips, calls: m.calls }).toEqual({ trips: 3, calls: 5 });
    expect(m.header()).toMatch(/^db;dur=[\d.]+;desc="3 rt, 5 calls"$/);
    // Synchronous answers (bun:sqlite) started together still overlap: each ends after all began.
    const sync = new DbMeter();
    await Promise.all([sync.time(async () => 1), sync.time(async () => 2)]);
    expect(sync.trips).toBe(1);
  });
});
