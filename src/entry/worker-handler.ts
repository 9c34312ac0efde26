import { createApp } from '../app.ts';
import { ConfigError, parseConfig } from '../config.ts';
import type { Deps } from '../deps.ts';
import { AppError, ERRORS } from '../core/errors.ts';
import { errorBody } from '../core/envelope.ts';
import { errorFields } from '../core/log.ts';
import { newTraceId } from '../http/trace.ts';
import { useCompiledWasm } from '../adapters/workers/argon2-wasm.ts';
import type { CfProperties, D1Database, ScheduledController, WorkerExecutionContext } from '../adapters/workers/bindings.ts';
import type { WorkerRequestEnv } from '../adapters/workers/client.ts';
import { workersDeps } from '../adapters/workers/deps.ts';
import type { R2BucketLike } from '../adapters/workers/r2-blobs.ts';
import { bootstrapAdmin } from '../modules/users/index.ts';
import { MENU_PRESETS } from '../compat/presets.ts';
import { tick } from '../modules/jobs/index.ts';

/** Bindings and vars from wrangler.toml, secrets, and .dev.vars locally. */
export interface Env {
  DB?: D1Database;
  FILES?: R2BucketLike;
  [name: string]: unknown;
}

/** The precompiled argon2/blake2b modules; omitted where WebAssembly may be compiled at run time (tests). */
export interface WorkerOptions {
  wasm?: { argon2: WebAssembly.Module; blake2b: WebAssembly.Module };
}

type Ready = { ok: true; deps: Deps; app: ReturnType<typeof createApp>; admin?: Promise<void> };
type Isolate = Ready | { ok: false; error: string };

const line = (level: string, msg: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });

function build(env: Env, options: WorkerOptions): Isolate {
  let config;
  try {
    config = parseConfig(env);
    // No disk to keep a generated secret on, and every isolate must sign alike: it is a secret.
    if (!config.JWT_SECRET) {
      throw new ConfigError('Invalid configuration: JWT_SECRET is required on Workers (wrangler secret put JWT_SECRET; locally in .dev.vars)');
    }
    if (!env.DB) throw new ConfigError('Invalid configuration: DB (the D1 binding) is missing from wrangler.toml');
  } catch (e) {
    if (e instanceof ConfigError) return { ok: false, error: e.message };
    throw e;
  }
  if (config.TRUST_PROXY) {
    // Cloudflare's edge sets CF-Connecting-IP itself; X-Forwarded-For there is whatever the client sent.
    console.warn(line('warn', 'TRUST_PROXY is ignored on Workers: the client address is CF-Connecting-IP'));
    config = { ...config, TRUST_PROXY: false };
  }
  if (!env.FILES) console.warn(line('warn', 'FILES (the R2 binding) is missing from wrangler.toml: file and image routes answer 500'));
  if (options.wasm) void useCompiledWasm(options.wasm);
  // JWT_SECRET was checked above.
  const deps = workersDeps({ config, d1: env.DB, files: env.FILES, secret: config.JWT_SECRET! });
  return { ok: true, deps, app: createApp(deps) };
}

const hasUsers = async (deps: Deps) => !!(await deps.db.selectFrom('users').select('id').limit(1).executeTakeFirst());

/**
 * Creates the first administrator from ADMIN_PASSWORD. Unlike on Bun, a random password is never
 * generated: a Worker has no console to show it on exactly once.
 */
async function ensureAdmin(deps: Deps): Promise<void> {
  const { config, log } = deps;
  if (!config.ADMIN_PASSWORD) {
    if (!(await hasUsers(deps))) {
      log.log(
        'error',
        'No administrator exists and ADMIN_PASSWORD is not set: set it (wrangler secret put ADMIN_PASSWORD; locally in .dev.vars) and the next request creates one',
        { loginName: config.ADMIN_LOGIN_NAME },
      );
    }
    return;
  }
  try {
    const result = await bootstrapAdmin(deps);
    if (result.created) log.log('info', 'administrator created from ADMIN_PASSWORD', { loginName: config.ADMIN_LOGIN_NAME });
    // The first start (this isolate created the administrator): the menus as the chosen client expects them.
    if (result.created && config.MENU_PRESET !== 'none') await MENU_PRESETS[config.MENU_PRESET].apply(deps);
  } catch (e) {
    // Two isolates can race on an empty table; the loser finds the winner's row and carries on.
    if (!(e instanceof AppError) && (await hasUsers(deps).catch(() => false))) return;
    throw e;
  }
}

function configErrorResponse(error: string): Response {
  const traceId = newTraceId();
  console.error(line('error', error, { traceId }));
  return new Response(JSON.stringify(errorBody(500, ERRORS.INTERNAL.msg, traceId)), {
    status: 500,
    headers: { 'content-type': 'application/json', 'x-trace-id': traceId },
  });
}

/**
 * The Worker's handlers. Deps are built on the first event an isolate sees (bindings exist only
 * then) and reused by every later one. A bad configuration answers every request with a 500
 * envelope and logs the variable at fault each time.
 */
export function createWorker(options: WorkerOptions = {}) {
  let isolate: Isolate | undefined;
  const current = (env: Env) => (isolate ??= build(env, options));

  /** The admin bootstrap, once per isolate; a transient failure (D1) is retried on the next request. */
  async function adminReady(state: Ready): Promise<void> {
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

  return {
    async fetch(request: Request, env: Env, ctx?: WorkerExecutionContext): Promise<Response> {
      const first = current(env);
      if (first.ok) await adminReady(first);
      // The bootstrap may have found the configuration bad after all.
      const state = isolate!;
      if (!state.ok) return configErrorResponse(state.error);
      // Hono's c.env carries this request's `cf`: middleware may rebuild c.req.raw (the body limit does) and lose it.
      const perRequest: WorkerRequestEnv = { cf: (request as Request & { cf?: CfProperties }).cf };
      return state.app.fetch(request, perRequest, ctx as never);
    },

    /**
     * The cron trigger (every minute, wrangler.toml): the scheduler's tick over the jobs table, the
     * same one the server's timer calls (modules/jobs). What is due runs, claimed in D1 so that
     * overlapping invocations never run a job twice; one tick stays within one invocation's limits.
     */
    async scheduled(controller: ScheduledController, env: Env): Promise<void> {
      const state = current(env);
      if (!state.ok) {
        console.error(line('error', state.error, { cron: controller.cron }));
        return;
      }
      try {
        const report = await tick(state.deps);
        state.deps.log.log('info', 'jobs', { cron: controller.cron, ...report });
      } catch (e) {
        state.deps.log.log('error', 'scheduler tick failed', { cron: controller.cron, ...errorFields(e) });
        throw e;
      }
    },
  };
}
