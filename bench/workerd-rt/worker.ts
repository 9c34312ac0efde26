// The production Worker with every D1 call (prepare().all/run/first/raw, batch) delayed by
// DB_DELAY_MS before it is sent: local D1 answers in microseconds, production D1 is a network
// round trip away, so the delay makes each round trip's cost visible in wall time.
import argon2 from 'argon2-wasm-edge/wasm/argon2.wasm';
import blake2b from 'argon2-wasm-edge/wasm/blake2b.wasm';
import { createWorker, type Env } from '../../src/entry/worker-handler.ts';
import type { D1Database } from '../../src/adapters/workers/bindings.ts';

const worker = createWorker({ wasm: { argon2, blake2b } });
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

function delayed(db: D1Database, ms: number): D1Database {
  const wrap = (stmt: ReturnType<D1Database['prepare']>): ReturnType<D1Database['prepare']> =>
    new Proxy(stmt, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        if (prop === 'bind') return (...args: unknown[]) => wrap(v.apply(target, args));
        if (prop === 'all' || prop === 'run' || prop === 'first' || prop === 'raw') return async (...args: unknown[]) => (await sleep(ms), v.apply(target, args));
        return v.bind(target);
      },
    });
  return new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === 'prepare') return (sql: string) => wrap(v.call(target, sql));
      if (prop === 'batch') return async (stmts: unknown[]) => (await sleep(ms), v.call(target, stmts));
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

let env2: Env | undefined;
const withDelay = (env: Env): Env => (env2 ??= { ...env, DB: delayed(env.DB!, Number(env.DB_DELAY_MS ?? 0)) });

export default {
  fetch: (request: Request, env: Env, ctx: never) => worker.fetch(request, withDelay(env), ctx),
  scheduled: (controller: never, env: Env) => worker.scheduled(controller, withDelay(env)),
};
