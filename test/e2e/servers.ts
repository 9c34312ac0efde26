import { Database } from 'bun:sqlite';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, serverCommand, type ServerRuntime } from '../../scripts/server-commands.ts';

export const E2E_ADMIN_PASSWORD = 'Correct-Horse-42';
const E2E_JWT_SECRET = 'e2e-secret-e2e-secret-e2e-secret-0123456789';

/** A running server the black-box suite talks to, plus a read-only look at its database. */
export interface Target {
  baseUrl: string;
  /** Runs a read-only query on the server's SQL database (only where the suite has no API for it). */
  sql<T = Record<string, unknown>>(query: string, ...params: (string | number)[]): T[];
  stop(): Promise<void>;
  output(): string;
  /** The server's process id (local servers only). */
  pid?: number;
}

/** What the contract suite needs: one server with the captcha on and one with it off. */
export interface Targets {
  runtime: string;
  captchaOn: Target;
  captchaOff: Target;
  adminPassword: string;
  /** Stops the servers and removes their temporary state. */
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => ok(port));
    });
  });
}

const live = new Set<ChildProcess>();
/** Kills a child's whole process group (wrangler → workerd, Vite → esbuild), first politely. */
export async function killTree(child: ChildProcess): Promise<void> {
  live.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((ok) => child.once('exit', () => ok()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, s);
    } catch {
      /* already gone */
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}
/**
 * Stops every server this process started and has not stopped yet. bun test runs no 'exit'
 * handlers, so the suite calls this in afterAll, which also runs when start-up failed half-way.
 */
export async function stopEverything(): Promise<void> {
  await Promise.all([...live].map(killTree));
}

function launch(cmd: string, args: string[], env: Record<string, string>) {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => out };
}

/** Polls GET /health until it answers 200, the child dies, or the time is up. */
async function waitReady(baseUrl: string, child: ChildProcess, output: () => string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before it was ready:\n${output()}`);
    if (output().includes('Build failed')) break; // wrangler would wait for a file change forever
    try {
      const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(150);
  }
  // e.g. wrangler after a failed build keeps running and waits for a change: stop it here.
  await killTree(child);
  throw new Error(`server at ${baseUrl} not ready (${timeoutMs} ms at most):\n${output()}`);
}

function sqlOn(file: () => string): Target['sql'] {
  return (query, ...params) => {
    const db = new Database(file());
    try {
      return db.query(query).all(...params) as never[];
    } finally {
      db.close();
    }
  };
}

/**
 * One server of `runtime` on a free port with its data under `dir`; `env` adds or overrides
 * variables; `wrap` may put the command inside another (e.g. `unshare` with its own mounts).
 */
export async function localServer(
  runtime: ServerRuntime,
  dir: string,
  captcha: boolean,
  env: Record<string, string> = {},
  wrap: (argv: string[]) => string[] = (argv) => argv,
): Promise<Target> {
  // Outside ./data the server creates only the last part of a path: the install's folder is made here.
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const dbPath = join(dir, 'admin.db');
  const [cmd, ...args] = wrap(serverCommand(runtime));
  const { child, output } = launch(cmd!, args, {
    NODE_ENV: 'test',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_PATH: dbPath,
    // The suite peeks into the database from outside (sql()), so the server must share the file.
    SQLITE_EXCLUSIVE: 'false',
    FILES_DIR: join(dir, 'files'),
    ADMIN_PASSWORD: E2E_ADMIN_PASSWORD,
    CAPTCHA_ENABLED: String(captcha),
    LOG_REQUESTS: 'false',
    ...env,
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitReady(baseUrl, child, output, 20_000);
  return { baseUrl, sql: sqlOn(() => dbPath), stop: () => killTree(child), output, pid: child.pid! };
}

/** One `bun src/entry/bun.ts` (see localServer). */
export const bunServer = (dir: string, captcha: boolean, env: Record<string, string> = {}, wrap?: (argv: string[]) => string[]) =>
  localServer('bun', dir, captcha, env, wrap);

/**
 * Two servers of one runtime (`src/entry/<runtime>.ts`, started as `npm run start:<runtime>` would)
 * on free ports with temporary databases. A runtime missing from node_modules fails the start.
 */
export async function startLocalTargets(runtime: ServerRuntime): Promise<Targets> {
  const dir = mkdtempSync(join(tmpdir(), `edge-e2e-${runtime}-`));
  const [captchaOn, captchaOff] = await both(localServer(runtime, join(dir, 'on'), true), localServer(runtime, join(dir, 'off'), false)).catch(removing(dir));
  return { runtime, captchaOn, captchaOff, adminPassword: E2E_ADMIN_PASSWORD, stop: stopAll([captchaOn, captchaOff], dir) };
}

const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
// Offline: no metrics, and the placeholder request.cf instead of fetching one from Cloudflare.
const wranglerEnv = { WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', CI: 'true' };

function run(args: string[]): Promise<string> {
  const { child, output } = launch('node', [WRANGLER, ...args], wranglerEnv);
  return new Promise((ok, fail) =>
    child.once('exit', (code) => {
      live.delete(child);
      code === 0 ? ok(output()) : fail(new Error(`wrangler ${args.join(' ')} exited with ${code}:\n${output()}`));
    }),
  );
}

/** The SQLite file miniflare keeps for the local D1 database under a --persist-to folder. */
function d1File(persist: string): string {
  const dir = join(persist, 'v3/d1/miniflare-D1DatabaseObject');
  const file = readdirSync(dir).find((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite');
  if (!file) throw new Error(`no local D1 database under ${dir}`);
  return join(dir, file);
}

/** `wrangler dev --local` on the state under `persist`; `extra` adds or overrides variables (e.g. JWT_SECRET). */
export async function workerServer(persist: string, captcha: boolean, envFile: string, extra: Record<string, string> = {}): Promise<Target> {
  const [port, inspector] = [await freePort(), await freePort()];
  const vars = { JWT_SECRET: E2E_JWT_SECRET, ADMIN_PASSWORD: E2E_ADMIN_PASSWORD, CAPTCHA_ENABLED: String(captcha), LOG_REQUESTS: 'false', ...extra };
  const { child, output } = launch(
    'node',
    [
      WRANGLER,
      'dev',
      '--local',
      '--persist-to',
      persist,
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--inspector-port',
      String(inspector),
      '--show-interactive-dev-session=false',
      // An explicit (empty) env file keeps a developer's .dev.vars / .env out of the test servers.
      '--env-file',
      envFile,
      ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
    ],
    wranglerEnv,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitReady(baseUrl, child, output, 60_000);
  return { baseUrl, sql: sqlOn(() => d1File(persist)), stop: () => killTree(child), output };
}

/**
 * Two `wrangler dev --local` servers (real workerd, local D1 and R2): the migrations are applied
 * once with `wrangler d1 migrations apply DB --local`, and the state folder copied for the second.
 */
export async function startWorkerTargets(): Promise<Targets> {
  const dir = mkdtempSync(join(tmpdir(), 'edge-e2e-workerd-'));
  const on = join(dir, 'on');
  const off = join(dir, 'off');
  await run(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', on]).catch(removing(dir));
  cpSync(on, off, { recursive: true });
  const envFile = join(dir, 'empty.env');
  writeFileSync(envFile, '');
  const [captchaOn, captchaOff] = await both(workerServer(on, true, envFile), workerServer(off, false, envFile)).catch(removing(dir));
  return { runtime: 'workerd', captchaOn, captchaOff, adminPassword: E2E_ADMIN_PASSWORD, stop: stopAll([captchaOn, captchaOff], dir) };
}

/** A server someone else runs (E2E_BASE_URL with the captcha off, E2E_CAPTCHA_BASE_URL with it on). */
export function externalTargets(): Targets {
  const remote = (baseUrl: string): Target => ({
    baseUrl: baseUrl.replace(/\/$/, ''),
    sql: () => {
      throw new Error('no database access to an external server');
    },
    stop: async () => {},
    output: () => '',
  });
  const off = remote(process.env.E2E_BASE_URL!);
  return {
    runtime: 'external',
    captchaOff: off,
    captchaOn: process.env.E2E_CAPTCHA_BASE_URL ? remote(process.env.E2E_CAPTCHA_BASE_URL) : off,
    adminPassword: process.env.E2E_ADMIN_PASSWORD ?? E2E_ADMIN_PASSWORD,
    stop: async () => {},
  };
}

/** A rejection handler that removes a temporary folder and rethrows. */
const removing =
  (dir: string) =>
  (err: unknown): never => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  };

/** Both servers, or none: when one fails to start, the other is stopped before the error is thrown. */
async function both(a: Promise<Target>, b: Promise<Target>): Promise<[Target, Target]> {
  const [x, y] = await Promise.allSettled([a, b]);
  if (x.status === 'fulfilled' && y.status === 'fulfilled') return [x.value, y.value];
  await Promise.all([x, y].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
  throw x.status === 'rejected' ? x.reason : (y as PromiseRejectedResult).reason;
}

function stopAll(targets: Target[], dir: string) {
  return async () => {
    await Promise.all(targets.map((t) => t.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
}
