import argon2Wasm from 'argon2-wasm-edge/wasm/argon2.wasm';
import blake2bWasm from 'argon2-wasm-edge/wasm/blake2b.wasm';
import { createApp } from '../app';
import { ConfigError, parseConfig } from '../config';
import type { Deps } from '../deps';
import { AppError, ERRORS } from '../core/errors';
import { errorBody } from '../core/envelope';
import { createKeys } from '../core/keys';
import { errorFields, jsonLogger } from '../core/log';
import { newTraceId } from '../http/trace';
import { useCompiledWasm, wasmArgon2Hasher } from '../adapters/workers/argon2-wasm';
import type { D1Database, ScheduledController, WorkerExecutionContext } from '../adapters/workers/bindings';
import { workersClient } from '../adapters/workers/client';
import { D1Dialect, d1Atomic } from '../adapters/workers/d1-dialect';
import { Kysely } from 'kysely';
import type { Database } from '../db/schema';
import { bootstrapAdmin } from '../modules/users/bootstrap';
import { cleanup } from '../modules/maintenance/cleanup';

/** Bindings and vars from wrangler.toml, secrets, and .dev.vars locally. */
export interface Env {
  DB?: D1Database;
  FILES?: unknown;
  [name: string]: unknown;
}

type App = ReturnType<typeof createApp>;
type Isolate =
  | { ok: true; deps: Deps; app: App; admin?: Promise<void> }
  | { ok: false; error: string };

/** Built on the first event an isolate sees and reused by every later one. */
let isolate: Isolate | undefined;

function build(env: Env): Isolate {
  let config;
  try {
    config = parseConfig(env);
    // No disk to keep a generated secret on: every isolate must see the same one, so it is a secret.
    if (!config.JWT_SECRET) {
      throw new ConfigError('Invalid configuration: JWT_SECRET is required on Workers (wrangler secret put JWT_SECRET; locally in .dev.vars)');
    }
    if (!env.DB) throw new ConfigError('Invalid configuration: DB (the D1 binding) is missing from wrangler.toml');
  } catch (e) {
    if (e instanceof ConfigError) return { ok: false, error: e.message };
    throw e;
  }
  void useCompiledWasm({ argon2: argon2Wasm, blake2b: blake2bWasm });
  const db = new Kysely<Database>({ dialect: new D1Dialect(env.DB) });
  const deps: Deps = {
    config,
    db,
    atomic: d1Atomic(env.DB),
    hasher: wasmArgon2Hasher(),
    // TODO(files): deps.blobs = r2Blobs(env.FILES) once src/adapters/workers/r2-blobs.ts lands.
    clock: { now: () => Date.now() },
    ids: { uuid: () => crypto.randomUUID() },
    log: jsonLogger(config.LOG_LEVEL),
    keys: createKeys(new TextEncoder().encode(config.JWT_SECRET)),
    client: workersClient,
  };
  return { ok: true, deps, app: createApp(deps) };
}

function current(env: Env): Isolate {
  return (isolate ??= build(env));
}

const hasUsers = async (deps: Deps) => !!(await deps.db.selectFrom('users').select('id').limit(1).executeTakeFirst());

/**
 * Creates the first administrator from ADMIN_PASSWORD. Unlike on Bun, a random password is never
 * generated: there is no console to show it on exactly once.
 */
async function ensureAdmin(deps: Deps): Promise<void> {
  const { config, log } = deps;
  if (!config.ADMIN_PASSWORD) {
    if (!(await hasUsers(deps))) {
      log.log('error', 'No administrator exists and ADMIN_PASSWORD is not set: set it (wrangler secret put ADMIN_PASSWORD; locally in .dev.vars) so the first request can create one', {
        loginName: config.ADMIN_LOGIN_NAME,
      });
    }
    return;
  }
  try {
    const result = await bootstrapAdmin(deps);
    if (result.created) log.log('info', 'administrator created from ADMIN_PASSWORD', { loginName: config.ADMIN_LOGIN_NAME });
  } catch (e) {
    // Two isolates can race on an empty table; the loser finds the winner's row.
    if (!(e instanceof AppError) && (await hasUsers(deps).catch(() => false))) return;
    throw e;
  }
}

/** Runs the admin bootstrap once per isolate; a transient failure is retried on the next request. */
async function adminReady(state: Extract<Isolate, { ok: true }>): Promise<void> {
  state.admin ??= ensureAdmin(state.deps).catch((e) => {
    if (e instanceof AppError) {
      // A refused ADMIN_PASSWORD is a configuration error, as it is on Bun.
      isolate = { ok: false, error: `Invalid configuration: ${e.message}` };
      return;
    }
    state.deps.log.log('error', 'administrator bootstrap failed (are the D1 migrations applied?)', errorFields(e));
    state.admin = undefined;
  });
  await state.admin;
}

function configErrorResponse(error: string): Response {
  const traceId = newTraceId();
  console.error(JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: error, traceId }));
  return new Response(JSON.stringify(errorBody(500, ERRORS.INTERNAL.msg, traceId)), {
    status: 500,
    headers: { 'content-type': 'application/json', 'x-trace-id': traceId },
  });
}

export default {
  async fetch(request: Request, env: Env, ctx: WorkerExecutionContext): Promise<Response> {
    let state = current(env);
    if (state.ok) {
      await adminReady(state);
      state = isolate!;
    }
    if (!state.ok) return configErrorResponse(state.error);
    return state.app.fetch(request, env, ctx as never);
  },

  async scheduled(controller: ScheduledController, env: Env): Promise<void> {
    const state = current(env);
    if (!state.ok) {
      console.error(JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: state.error, cron: controller.cron }));
      return;
    }
    try {
      // TODO(files): also remove orphan blobs once the files module's sweep lands on main.
      const counts = await cleanup(state.deps);
      state.deps.log.log('info', 'cleanup', { cron: controller.cron, ...counts });
    } catch (e) {
      state.deps.log.log('error', 'cleanup failed', { cron: controller.cron, ...errorFields(e) });
      throw e;
    }
  },
};
