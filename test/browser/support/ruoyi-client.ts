// RuoYi-Vue3 (../shared/clients/ruoyi-vue3-e019ee1.tar.gz), run as its users run it: unpacked to a
// temporary folder, its dependencies installed from the npm registry, its Vite dev server started.
// The one change to its files is `baseUrl` in vite.config.js (its /dev-api proxy's target), which
// points it at our server and the RuoYi dialect's prefix. Nothing of the client is copied into
// this repository.
//
// The installed node_modules are kept outside the repository (RUOYI_CACHE_DIR, by default
// ~/.cache/edge-admin/ruoyi-vue3/<sha256 of the tarball>-<platform>-<arch>/), so only the first
// run pays for `npm install`; every run links the cached packages into a node_modules folder of
// its own, so runs never share Vite's dependency cache (node_modules/.vite), which is kept per
// slot between runs (see startRuoyiClient).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { killTree } from '../../e2e/servers.ts';
import { ROOT, freePort } from '../support.ts';

/** The client's tarball: RUOYI_TARBALL, or the copy beside the checkout in ../shared/clients. */
export const RUOYI_TARBALL = process.env.RUOYI_TARBALL ?? resolve(ROOT, '../shared/clients/ruoyi-vue3-e019ee1.tar.gz');
export const hasRuoyiTarball = existsSync(RUOYI_TARBALL);
/** The folder the tarball unpacks to. */
const APP_FOLDER = 'RuoYi-Vue3';
/** The prefix the client puts before every API path in development (`VITE_APP_BASE_API`). */
export const RUOYI_DEV_PREFIX = '/dev-api';
const REGISTRY = 'https://registry.npmjs.org/';
/** The line of vite.config.js that the one allowed change replaces (must occur exactly once). */
const BASE_URL_LINE = /^const baseUrl = '[^'\n]*'/m;

export function ruoyiCacheRoot(): string {
  return process.env.RUOYI_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'edge-admin', 'ruoyi-vue3');
}

export interface RuoyiInstall {
  /** The cache folder of this tarball (node_modules, the lockfile, Vite's saved dependency caches). */
  dir: string;
  /** The cached node_modules (each run links its packages into a node_modules of its own). */
  nodeModules: string;
  /** The lockfile npm wrote at install time (what exactly was installed). */
  lockfile: string;
  /** True when this call ran `npm install`; false when the cache already held it. */
  cold: boolean;
  /** Time of this call: the whole install when cold, the cache check when warm. */
  ms: number;
  /** What the cold install recorded (versions, its duration, package count). */
  record: InstallRecord;
}

interface InstallRecord {
  tarballSha256: string;
  installedAt: string;
  installMs: number;
  node: string;
  npm: string;
  /** Entries in the lockfile npm wrote (nested copies counted; npm reports fewer "added"). */
  lockfileEntries: number;
  command: string;
}

/** A text tail of a child's output (enough for an error message, never unbounded). */
function tail() {
  let text = '';
  return {
    add: (b: Buffer | string) => void (text = (text + b.toString()).slice(-40_000)),
    text: () => text,
  };
}

/**
 * Only what the child needs from outside; npm_config_* of an outer `npm test` must not leak in.
 * PATH loses every node_modules/.bin folder: under `npm test` or `npx bun` the first `node` on
 * PATH is this project's own devDependency (Node 26), whose npm reads no global npmrc (that file
 * sits beside the system Node) and so misses the machine's CA file behind a TLS-inspecting proxy:
 * every fetch failed with SELF_SIGNED_CERT_IN_CHAIN and npm retried for over 15 minutes. The
 * system node and npm are used instead, and the CA variables are passed on as they are.
 */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const path = (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .filter((dir) => dir && !/[\\/]node_modules[\\/]\.bin$/.test(dir))
    .join(':');
  const env: Record<string, string> = { PATH: path, HOME: process.env.HOME ?? tmpdir(), TMPDIR: tmpdir(), LANG: 'C.UTF-8' };
  const passed = ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'npm_config_cache', 'npm_config_cafile'];
  for (const key of passed) {
    const value = process.env[key];
    if (value) env[key] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to its end; rejects with its output when it fails. */
function run(cmd: string, args: string[], cwd: string, env = childEnv(), timeoutMs = 10 * 60_000): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = tail();
    child.stdout!.on('data', out.add);
    child.stderr!.on('data', out.add);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) ok(out.text());
      else fail(new Error(`${cmd} ${args.join(' ')} (in ${cwd}) ended with ${code ?? signal}:\n${out.text()}`));
    });
  });
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Unpacks the tarball under `into` and returns the app folder (RuoYi-Vue3/). */
async function unpack(into: string): Promise<string> {
  await run('tar', ['-xzf', RUOYI_TARBALL, '-C', into], into);
  const app = join(into, APP_FOLDER);
  if (!existsSync(join(app, 'package.json'))) throw new Error(`${RUOYI_TARBALL} did not unpack to ${APP_FOLDER}/ (found: ${readdirSync(into).join(', ')})`);
  return app;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Takes a lock folder holding the owner's pid. Gives up (false) while a live process holds it;
 * a lock whose owner is gone (or that never got its pid file within a minute) is taken over.
 */
function tryLock(lock: string): boolean {
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = 0;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8').trim());
      } catch {
        const since = statSync(lock, { throwIfNoEntry: false });
        if (!since) continue; // released meanwhile: try again
        if (Date.now() - since.mtimeMs < 60_000) return false; // just taken, pid not written yet
      }
      if (owner && alive(owner)) return false;
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** One installer at a time per cache folder (two test processes may start together). */
async function withLock<T>(lock: string, done: () => boolean, work: () => Promise<T>, waitMs = 20 * 60_000): Promise<T | undefined> {
  const deadline = Date.now() + waitMs;
  while (!tryLock(lock)) {
    if (done()) return undefined;
    if (Date.now() > deadline) throw new Error(`waited ${waitMs} ms for another install of the RuoYi client (lock ${lock})`);
    await Bun.sleep(500);
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The client's node_modules from the cache, installed from the npm registry first if the cache
 * does not hold them yet. Install-time settings only (nothing of the client changes):
 * - the registry is named explicitly (a user or project .npmrc may name another one);
 * - `--ignore-scripts`: no third-party install script runs. The ones in this tree are not needed
 *   for the dev server (esbuild's binary comes as an optional dependency, vue-demi defaults to
 *   Vue 3, @parcel/watcher is only sass's --watch); npm 11 would skip them unapproved anyway;
 * - the tarball has no lockfile, so npm resolves the client's exact pins and their ranges at
 *   install time; the lockfile it writes is kept beside the cache for the record.
 */
export async function ensureRuoyiInstalled(): Promise<RuoyiInstall> {
  const started = Date.now();
  const sha = await sha256File(RUOYI_TARBALL);
  const root = ruoyiCacheRoot();
  const dir = join(root, `${sha.slice(0, 16)}-${process.platform}-${process.arch}`);
  const recordFile = join(dir, 'install.json');
  const nodeModules = join(dir, 'node_modules');
  const lockfile = join(dir, 'package-lock.json');
  const done = () => existsSync(recordFile) && existsSync(join(nodeModules, 'vite', 'package.json'));
  const result = (cold: boolean): RuoyiInstall => ({
    dir,
    nodeModules,
    lockfile,
    cold,
    ms: Date.now() - started,
    record: JSON.parse(readFileSync(recordFile, 'utf8')) as InstallRecord,
  });
  if (done()) return result(false);

  mkdirSync(root, { recursive: true });
  let installed = false;
  await withLock(`${dir}.lock`, done, async () => {
    if (done()) return;
    const staging = mkdtempSync(join(root, '.staging-'));
    try {
      const app = await unpack(staging);
      const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--no-update-notifier', `--registry=${REGISTRY}`, '--loglevel=warn'];
      const t0 = Date.now();
      await run('npm', args, app, childEnv({ npm_config_registry: REGISTRY }));
      const installMs = Date.now() - t0;
      if (!existsSync(join(app, 'node_modules', 'vite', 'package.json'))) throw new Error('npm install finished but node_modules/vite is missing');
      const versions = await Promise.all([run('node', ['--version'], app), run('npm', ['--version'], app)]);
      const packages = (JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: object }).packages;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      renameSync(join(app, 'node_modules'), nodeModules);
      renameSync(join(app, 'package-lock.json'), lockfile);
      const record: InstallRecord = {
        tarballSha256: sha,
        installedAt: new Date().toISOString(),
        installMs,
        node: versions[0]!.trim(),
        npm: versions[1]!.trim(),
        lockfileEntries: Object.keys(packages).length - 1,
        command: `npm ${args.join(' ')}`,
      };
      // Written last: its presence is what marks the cache complete.
      writeFileSync(recordFile, JSON.stringify(record, null, 2));
      installed = true;
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  });
  if (!done()) throw new Error(`the RuoYi client's install did not complete in ${dir}`);
  return result(installed);
}

/** Replaces the value of `baseUrl` in vite.config.js, and proves that nothing else changed. */
export function pointViteConfigAt(appDir: string, baseUrl: string): void {
  if (!/^https?:\/\/[^\s'\\]+$/.test(baseUrl)) throw new Error(`not a plain http(s) URL: ${baseUrl}`);
  const file = join(appDir, 'vite.config.js');
  const before = readFileSync(file, 'utf8');
  const matches = before.match(new RegExp(BASE_URL_LINE.source, 'gm')) ?? [];
  if (matches.length !== 1) throw new Error(`vite.config.js: expected one "const baseUrl = '…'" line, found ${matches.length}`);
  const after = before.replace(BASE_URL_LINE, `const baseUrl = '${baseUrl}'`);
  const a = before.split('\n');
  const b = after.split('\n');
  const changed = a.filter((line, i) => line !== b[i]);
  if (a.length !== b.length || changed.length !== 1) throw new Error('vite.config.js: the baseUrl change touched more than its own line');
  writeFileSync(file, after);
}

/** Every file under `dir` (relative paths), node_modules left out. */
function filesUnder(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (rel !== 'node_modules') out.push(...filesUnder(dir, rel));
    } else out.push(rel);
  }
  return out;
}

/**
 * The client's files that differ from a fresh unpack of the tarball (added, removed or changed;
 * node_modules aside). For a client started by startRuoyiClient this must be ['vite.config.js'].
 */
export async function changedClientFiles(appDir: string): Promise<string[]> {
  const fresh = mkdtempSync(join(tmpdir(), 'ruoyi-vue3-pristine-'));
  try {
    const pristine = await unpack(fresh);
    const a = new Set(filesUnder(pristine));
    const b = new Set(filesUnder(appDir));
    const changed = [...new Set([...a, ...b])].filter((f) => !a.has(f) || !b.has(f) || !readFileSync(join(pristine, f)).equals(readFileSync(join(appDir, f))));
    return changed.sort();
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/**
 * The run's own node_modules: a real folder whose entries are symbolic links to the cached
 * packages. Vite keeps its dependency cache (node_modules/.vite) in this folder, so runs never
 * share it; packages resolve to their real paths in the cache, where Node finds their own
 * dependencies as it would in the installed tree. Making and removing it takes milliseconds
 * (a hard-linked copy of the 24k files took 2-4 s each way on this machine).
 */
function linkNodeModules(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from)) {
    if (entry === '.vite' || entry === '.package-lock.json') continue;
    symlinkSync(join(from, entry), join(to, entry));
  }
}

export interface RuoyiTimings {
  /** ensureRuoyiInstalled(): the install when cold, the cache check when warm. */
  installMs: number;
  installCold: boolean;
  unpackMs: number;
  linkMs: number;
  /** From spawning Vite to its first 200 on `/`. */
  devServerStartMs: number;
  /** Whether Vite's pre-bundled dependencies of an earlier run in this slot were there to reuse. */
  reusedDeps: boolean;
}

export interface RuoyiClient {
  /** The dev server's origin, e.g. http://127.0.0.1:41234 */
  url: string;
  /** What vite.config.js's baseUrl now says (our server + the dialect's prefix). */
  baseUrl: string;
  /** The unpacked client (removed by stop()). */
  appDir: string;
  install: RuoyiInstall;
  timings: RuoyiTimings;
  /** Vite's output so far (the tail). */
  output(): string;
  /** How often Vite told the page to reload because it optimised dependencies it found late. */
  depReloads(): number;
  stop(): Promise<void>;
}

/** How many clients of one tarball may run at once on this machine (each in its own slot). */
const SLOTS = 8;

/**
 * Unpacks the client to a temporary folder, points its dev proxy at `baseUrl` (our server's URL
 * plus the dialect's prefix, e.g. http://127.0.0.1:3000/ruoyi) and starts its Vite dev server on
 * a free port of 127.0.0.1. The browser then talks to the dev server only; the client's calls go
 * to /dev-api/…, which Vite strips and forwards to `baseUrl` + the rest.
 *
 * The temporary folder has a fixed name per slot (…/ruoyi-vue3-<sha>-<slot>/, a slot is taken by
 * a lock while a client runs in it) and is removed by stop(). The fixed name is what lets Vite
 * reuse its pre-bundled dependencies: their hash covers the project's root path, so stop() moves
 * node_modules/.vite into the cache (<cache>/vite-deps/<slot>) and the next start in that slot
 * moves it back. Without it each start pre-bundles element-plus, echarts… again: the first page
 * load took 38 s instead of 11 s on this machine under load.
 */
export async function startRuoyiClient(opts: { baseUrl: string; startTimeoutMs?: number }): Promise<RuoyiClient> {
  if (!hasRuoyiTarball) throw new Error(`RuoYi-Vue3 tarball missing: ${RUOYI_TARBALL} (set RUOYI_TARBALL)`);
  const install = await ensureRuoyiInstalled();
  const tag = basename(install.dir).split('-')[0];
  let slot = -1;
  for (let k = 0; k < SLOTS && slot < 0; k++) if (tryLock(join(tmpdir(), `ruoyi-vue3-${tag}-${k}.lock`))) slot = k;
  if (slot < 0) throw new Error(`all ${SLOTS} RuoYi client slots in ${tmpdir()} are taken by running processes`);
  const lock = join(tmpdir(), `ruoyi-vue3-${tag}-${slot}.lock`);
  const work = join(tmpdir(), `ruoyi-vue3-${tag}-${slot}`);
  const savedDeps = join(install.dir, 'vite-deps', String(slot));
  const release = () => {
    rmSync(work, { recursive: true, force: true });
    rmSync(lock, { recursive: true, force: true });
  };
  try {
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work);
    let t = Date.now();
    const appDir = await unpack(work);
    const unpackMs = Date.now() - t;
    pointViteConfigAt(appDir, opts.baseUrl);
    t = Date.now();
    linkNodeModules(install.nodeModules, join(appDir, 'node_modules'));
    const reusedDeps = existsSync(savedDeps);
    if (reusedDeps) renameSync(savedDeps, join(appDir, 'node_modules', '.vite'));
    const linkMs = Date.now() - t;
    for (let attempt = 1; ; attempt++) {
      try {
        const dev = await startVite(appDir, opts.startTimeoutMs ?? 90_000);
        return {
          ...dev,
          baseUrl: opts.baseUrl,
          appDir,
          install,
          timings: { installMs: install.ms, installCold: install.cold, unpackMs, linkMs, devServerStartMs: dev.startMs, reusedDeps },
          async stop() {
            await dev.stop();
            const deps = join(appDir, 'node_modules', '.vite');
            if (existsSync(deps)) {
              mkdirSync(join(install.dir, 'vite-deps'), { recursive: true });
              rmSync(savedDeps, { recursive: true, force: true });
              renameSync(deps, savedDeps);
            }
            release();
          },
        };
      } catch (e) {
        // --strictPort: a port taken between probe and listen fails the start; try another.
        if (attempt === 3 || !/already in use|EADDRINUSE/i.test(String(e))) throw e;
      }
    }
  } catch (e) {
    release();
    throw e;
  }
}

async function startVite(appDir: string, timeoutMs: number) {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  // The config asks for port 80, all interfaces and opening a browser; the command line and
  // BROWSER=none override that without touching the file.
  const child = spawn('node', ['node_modules/vite/bin/vite.js', '--port', String(port), '--strictPort', '--host', '127.0.0.1'], {
    cwd: appDir,
    env: childEnv({ BROWSER: 'none', NO_COLOR: '1', FORCE_COLOR: '0' }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = tail();
  let reloads = 0;
  const watch = (b: Buffer) => {
    out.add(b);
    reloads += (b.toString().match(/optimized dependencies changed\. reloading/g) ?? []).length;
  };
  child.stdout!.on('data', watch);
  child.stderr!.on('data', watch);
  const stop = () => killTree(child);
  const deadline = started + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vite exited with ${child.exitCode} before it served ${url}:\n${out.text()}`);
    const up = await fetch(`${url}/`, { signal: AbortSignal.timeout(5000) }).then((r) => r.status === 200, () => false);
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`vite did not serve ${url} within ${timeoutMs} ms:\n${out.text()}`);
    }
    await Bun.sleep(100);
  }
  return { url, startMs: Date.now() - started, output: out.text, depReloads: () => reloads, stop };
}

/** One call the page made to the API (through the dev proxy) and what came back. */
export interface RuoyiCall {
  method: string;
  /** The path after /dev-api, query included, e.g. /system/user/list?pageNum=1&pageSize=10 */
  path: string;
  requestBody: string | null;
  status: number | null;
  /** Our server's trace id: present only if the answer really came from our server. */
  traceId: string | null;
  contentType: string | null;
  /** The answer's body (JSON text), cut at 2000 characters; null for binary answers. */
  body: string | null;
  failure: string | null;
}

/**
 * A page of the client with its API calls, console errors and page errors recorded: every
 * request to /dev-api/… (the client's API calls) becomes a RuoyiCall once it is answered.
 */
export async function openRecordedPage(context: BrowserContext, client: RuoyiClient) {
  const page: Page = await context.newPage();
  const calls: RuoyiCall[] = [];
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  /** The client's own files (scripts, styles, images from the dev server) that failed to load. */
  const assetFailures: string[] = [];
  const pending: Promise<void>[] = [];
  const apiPath = (u: string) => {
    const url = new URL(u);
    return url.origin === client.url && url.pathname.startsWith(`${RUOYI_DEV_PREFIX}/`) ? url.pathname.slice(RUOYI_DEV_PREFIX.length) + url.search : null;
  };
  page.on('requestfinished', (request) => {
    const path = apiPath(request.url());
    if (path === null) return;
    pending.push(
      (async () => {
        const response = await request.response();
        const headers = response ? await response.allHeaders() : {};
        const contentType = headers['content-type'] ?? null;
        const text = response && (contentType ?? '').includes('json') ? await response.text().catch(() => null) : null;
        calls.push({
          method: request.method(),
          path,
          requestBody: request.postData(),
          status: response?.status() ?? null,
          traceId: headers['x-trace-id'] ?? null,
          contentType,
          body: text === null ? null : text.slice(0, 2000),
          failure: null,
        });
      })(),
    );
  });
  page.on('response', (response) => {
    const url = response.url();
    if (url.startsWith(`${client.url}/`) && apiPath(url) === null && response.status() >= 400) assetFailures.push(`${response.status()} ${url}`);
  });
  page.on('requestfailed', (request) => {
    const path = apiPath(request.url());
    if (path === null) {
      if (request.url().startsWith(`${client.url}/`)) assetFailures.push(`${request.failure()?.errorText ?? 'failed'} ${request.url()}`);
      return;
    }
    calls.push({ method: request.method(), path, requestBody: request.postData(), status: null, traceId: null, contentType: null, body: null, failure: request.failure()?.errorText ?? 'failed' });
  });
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return {
    page,
    calls,
    consoleErrors,
    pageErrors,
    assetFailures,
    /** Waits until every finished request has been written down. */
    settled: async () => void (await Promise.all(pending)),
  };
}

/** The size of a file, or 0 when it does not exist (for asserting on written screenshots). */
export function fileSize(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}
