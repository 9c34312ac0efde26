// The real vue-vben-admin 5.7.0 (../shared/clients/vue-vben-admin-e3369bd.tar.gz), installed from
// npm and served by its own Vite dev server, for browser tests against our API. Nothing of its code
// changes: the API base comes in through VITE_GLOB_API_URL (an environment variable) and the only
// edits are install fixes this network needs, each listed in INSTALL_FIXES below and checked to
// apply exactly as written (a different tarball stops the install with the reason).
//
// The app is `playground/` (package @vben/playground): the only app of the tarball with the system
// views (user, role, menu, dept); apps/web-antd has the login and dashboards but no system pages.
//
// The installed tree is kept outside the repository, keyed by the tarball's hash and this recipe's
// version, so only the first run pays for the install:
//   $VBEN_CACHE_DIR (default ~/.cache/edge-admin-clients)/vben-<hash>-r<recipe>/vue-vben-admin
// Run alone: `bun test/browser/support/vben-client.ts` installs (or finds) it and prints the timings;
// `bun test test/browser/vben-smoke.test.ts` runs the smoke test.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { CHROMIUM, hasChromium, launchChromium, ROOT } from '../support.ts';

export const VBEN_TARBALL = process.env.VBEN_TARBALL ?? resolve(ROOT, '../shared/clients/vue-vben-admin-e3369bd.tar.gz');
/** What the tarball unpacks to, and the app the tests run. */
const TREE = 'vue-vben-admin';
export const VBEN_APP = { dir: 'playground', pkg: '@vben/playground' } as const;
/**
 * What pnpm installs and stubs: the app and its workspace dependencies, and @vben/vite-config
 * (with @vben/node-utils), which its vite.config.ts imports as a root devDependency that
 * `@vben/playground...` does not reach.
 */
const FILTERS = [`${VBEN_APP.pkg}...`, '@vben/vite-config...'].flatMap((f) => ['--filter', f]);
/** The pnpm its package.json asks for (packageManager), from npm; it needs Node >= 22. */
const PNPM_VERSION = '11.16.0';
/** Bump when INSTALL_FIXES or the install steps change: a new key, a fresh install. */
const RECIPE = 4;
/** Our devDependency `node` (the npm package that brings a Node binary): Node 26 here. */
const NODE_BIN = join(ROOT, 'node_modules/node/bin/node');
const CACHE_BASE = process.env.VBEN_CACHE_DIR ?? join(homedir(), '.cache', 'edge-admin-clients');
const READY = '.edge-admin-ready.json';

/**
 * Versions its lockfile pins that the reachable registry does not have, each swapped for the
 * nearest earlier version it has (the lockfile entry is rewritten from that version's manifest).
 * The first three are in its pnpm-workspace.yaml catalog too (the clients README names them); the
 * rest (antdv-next's own dependencies) were found by the install itself, which keeps looking for
 * more (see MAX_DISCOVERED_SWAPS) should the registry change.
 */
const MISSING_VERSIONS: { name: string; from: string; to: string; catalog: boolean }[] = [
  { name: 'antdv-next', from: '1.4.5', to: '1.3.3', catalog: true },
  { name: 'vxe-pc-ui', from: '4.16.19', to: '4.16.15', catalog: true },
  { name: 'vxe-table', from: '4.20.6', to: '4.20.5', catalog: true },
  { name: '@v-c/util', from: '1.0.21', to: '1.0.19', catalog: false },
  { name: '@antdv-next/icons', from: '1.1.1', to: '1.0.8', catalog: false },
  { name: '@v-c/cascader', from: '1.1.2', to: '1.1.0', catalog: false },
  { name: '@v-c/overflow', from: '1.1.1', to: '1.1.0', catalog: false },
  { name: '@v-c/select', from: '1.1.4', to: '1.1.0', catalog: false },
  { name: '@v-c/resize-observer', from: '1.1.3', to: '1.1.0', catalog: false },
  { name: '@v-c/trigger', from: '1.0.18', to: '1.0.15', catalog: false },
  { name: '@v-c/tree', from: '1.1.1', to: '1.1.0', catalog: false },
  { name: '@v-c/virtual-list', from: '1.1.0', to: '1.0.8', catalog: false },
  { name: '@v-c/collapse', from: '1.0.1', to: '1.0.0', catalog: false },
  { name: '@v-c/notification', from: '2.0.2', to: '2.0.0', catalog: false },
  { name: '@v-c/mentions', from: '1.1.3', to: '1.1.0', catalog: false },
  { name: '@v-c/dialog', from: '1.2.0', to: '1.1.1', catalog: false },
  { name: '@v-c/input', from: '1.1.1', to: '1.1.0', catalog: false },
  { name: '@v-c/menu', from: '1.2.2', to: '1.1.1', catalog: false },
  { name: '@v-c/pagination', from: '1.0.1', to: '1.0.0', catalog: false },
  { name: '@v-c/input-number', from: '1.0.6', to: '1.0.5', catalog: false },
  { name: '@v-c/picker', from: '1.2.2', to: '1.1.1', catalog: false },
  { name: '@v-c/qrcode', from: '1.0.1', to: '1.0.0', catalog: false },
  { name: '@v-c/dropdown', from: '1.0.4', to: '1.0.2', catalog: false },
  { name: '@v-c/progress', from: '1.0.1', to: '1.0.0', catalog: false },
  { name: '@v-c/mutate-observer', from: '1.0.2', to: '1.0.1', catalog: false },
  { name: '@v-c/segmented', from: '1.0.3', to: '1.0.2', catalog: false },
  { name: '@v-c/table', from: '1.1.8', to: '1.1.3', catalog: false },
  { name: '@v-c/tree-select', from: '1.1.1', to: '1.1.0', catalog: false },
  { name: '@v-c/tooltip', from: '1.0.4', to: '1.0.3', catalog: false },
  { name: '@v-c/tabs', from: '1.2.1', to: '1.1.0', catalog: false },
];

/** Every edit made to the unpacked tree; none touches source code. */
export const INSTALL_FIXES = [
  'pnpm-lock.yaml: the root importer pins vue at specifier ^3.5.41 while its package.json (catalog + override) says ^3.5.40; aligned to ^3.5.40 (pnpm refuses a frozen install otherwise)',
  ...MISSING_VERSIONS.map((m) => `${m.name} ${m.from} -> ${m.to} (not on the registry) in ${m.catalog ? "pnpm-workspace.yaml's catalog and " : ''}pnpm-lock.yaml`),
  'the npm registry passed explicitly (its .npmrc names another one)',
  `install filtered to ${VBEN_APP.pkg} and @vben/vite-config with their workspace dependencies, without lifecycle scripts; then \`pnpm rebuild\` and the "stub" build for that set only (the root postinstall would stub every workspace package, installed or not, and fails)`,
  `${VBEN_APP.dir}/.env.development.local: VITE_NITRO_MOCK=false (the Vite plugin would start vben's own mock backend on port 5320)`,
];

export interface VbenInstall {
  /** The unpacked monorepo with its node_modules. */
  root: string;
  appDir: string;
  pnpm: string;
  node: string;
  /** true when an earlier run's tree was reused. */
  cached: boolean;
  /** Milliseconds per step of the install that produced this tree (from its stamp when cached). */
  timings: Record<string, number>;
  /** This call's own duration. */
  ms: number;
}

export type Prepared = { ok: true; install: VbenInstall } | { ok: false; reason: string };

/** A reason on one line for a test title: its first line and the first error line of the output. */
export function shortReason(reason: string): string {
  const lines = reason.split('\n').map((l) => l.trim()).filter(Boolean);
  const err = lines.slice(1).find((l) => /ERR_|error code|E404|ENOTFOUND|ECONNREFUSED|not found/i.test(l));
  const first = (lines[0] ?? '').replace(/:$/, '');
  const one = err ? `${first}: ${err}` : first;
  return one.length > 300 ? `${one.slice(0, 297)}...` : one;
}

/** Why the vben tests cannot run on this machine at all (before trying an install), or null. */
export function vbenPrecondition(): string | null {
  if (!hasChromium) return `${CHROMIUM} is missing (apt-get install -y chromium fonts-noto-cjk)`;
  if (!existsSync(VBEN_TARBALL)) return `the client tarball ${VBEN_TARBALL} is missing`;
  if (!existsSync(NODE_BIN)) return `${NODE_BIN} is missing (npm ci installs the node devDependency)`;
  const v = spawnSync(NODE_BIN, ['--version'], { encoding: 'utf8' }).stdout.trim();
  if (Number(v.replace(/^v/, '').split('.')[0]) < 22) return `pnpm ${PNPM_VERSION} needs Node >= 22; ${NODE_BIN} is ${v}`;
  return null;
}

/** A failed install step: its output tail says why (e.g. a version missing from the registry). */
export class InstallError extends Error {}

/**
 * Finds the installed tree for this tarball or installs it: unpack to a temporary folder beside
 * the cache entry, apply INSTALL_FIXES, `pnpm install` the app, run its workspace stubs, then
 * rename into place (a half-done install is never taken for a finished one). Never throws for an
 * install that cannot succeed here: the reason comes back instead.
 */
export async function prepareVben(log: (line: string) => void = () => undefined): Promise<Prepared> {
  const t0 = performance.now();
  const pre = vbenPrecondition();
  if (pre) return { ok: false, reason: pre };
  try {
    const key = `vben-${(await sha256(VBEN_TARBALL)).slice(0, 16)}-r${RECIPE}`;
    const entry = join(CACHE_BASE, key);
    const root = join(entry, TREE);
    const stamp = join(entry, READY);
    const pnpm = join(CACHE_BASE, `pnpm-${PNPM_VERSION}`, 'node_modules/pnpm/bin/pnpm.mjs');
    if (existsSync(stamp)) {
      const { timings } = JSON.parse(readFileSync(stamp, 'utf8'));
      return { ok: true, install: { root, appDir: join(root, VBEN_APP.dir), pnpm, node: NODE_BIN, cached: true, timings, ms: performance.now() - t0 } };
    }
    const timings: Record<string, number> = {};
    const step = async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => {
      const s = performance.now();
      log(`vben install: ${name}…`);
      const r = await fn();
      timings[name] = Math.round(performance.now() - s);
      return r;
    };
    mkdirSync(CACHE_BASE, { recursive: true });
    removeStaleTrees(key);
    const registry = await step('registry', () => npmRegistry());
    await step('pnpm', () => installPnpm(registry, pnpm));
    const work = mkdtempSync(join(CACHE_BASE, `${key}.tmp-`));
    try {
      const tree = join(work, TREE);
      await step('unpack', () => run('tar', ['-xzf', VBEN_TARBALL, '-C', work], { cwd: work }));
      await step('fixes', () => applyFixes(tree, registry));
      const env = pnpmEnv(registry, await npmCafile(), work, pnpm);
      const pnpmArgs = (args: string[]) => [pnpm, ...args, `--registry=${registry}`, `--store-dir=${join(CACHE_BASE, 'pnpm-store')}`];
      const swapped: string[] = [];
      await step('install', async () => {
        for (;;) {
          try {
            // No lifecycle scripts here: the root's postinstall would stub every workspace package,
            // installed or not. The dependencies' own builds run just after (rebuild).
            return await run(NODE_BIN, pnpmArgs(['install', '--frozen-lockfile', '--ignore-scripts', ...FILTERS, '--reporter=append-only']), {
              cwd: tree,
              env,
              timeoutMs: 20 * 60_000,
            });
          } catch (e) {
            // A further locked version the registry lacks (the README's list is not the whole
            // story): swap it like the known ones, then install again (the store keeps the rest).
            const missing = e instanceof InstallError ? missingTarball(e.message) : null;
            if (!missing || swapped.length >= MAX_DISCOVERED_SWAPS) throw e;
            const to = await nearestEarlier(registry, missing.name, missing.version);
            log(`vben install: ${missing.name}@${missing.version} is not on the registry; using ${to}`);
            const lockPath = join(tree, 'pnpm-lock.yaml');
            writeFileSync(lockPath, await swapLockedVersion(readFileSync(lockPath, 'utf8'), missing.name, missing.version, to, await manifest(registry, `${missing.name}@${to}`), registry, false));
            swapped.push(`${missing.name} ${missing.version} -> ${to}`);
          }
        }
      });
      // The build scripts its pnpm-workspace.yaml allows (esbuild, vue-demi, @parcel/watcher…).
      await step('rebuild', () => run(NODE_BIN, [pnpm, ...FILTERS, 'rebuild'], { cwd: tree, env, timeoutMs: 10 * 60_000 }));
      // Flags after `run stub` would go to the script: only the filter here (the registry is in env).
      await step('stub', () => run(NODE_BIN, [pnpm, ...FILTERS, '-r', 'run', '--if-present', 'stub'], { cwd: tree, env, timeoutMs: 10 * 60_000 }));
      timings.total = Math.round(performance.now() - t0);
      const fixes = [...INSTALL_FIXES, ...swapped.map((s) => `${s} (not on the registry; found during the install) in pnpm-lock.yaml`)];
      writeFileSync(join(work, READY), JSON.stringify({ tarball: VBEN_TARBALL, pnpm: PNPM_VERSION, fixes, timings }, null, 2));
      try {
        renameSync(work, entry);
      } catch (e) {
        // Another run finished the same install first: use its tree.
        if (!existsSync(stamp)) throw e;
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return { ok: true, install: { root, appDir: join(root, VBEN_APP.dir), pnpm, node: NODE_BIN, cached: false, timings, ms: performance.now() - t0 } };
  } catch (e) {
    if (e instanceof InstallError) return { ok: false, reason: e.message };
    throw e;
  }
}

/**
 * 1.5 GB each: trees of this tarball under an older recipe, and temporary folders of installs
 * that were killed more than an hour ago.
 */
function removeStaleTrees(key: string) {
  const [hashPart] = key.split('-r');
  for (const name of readdirSync(CACHE_BASE)) {
    const path = join(CACHE_BASE, name);
    const oldRecipe = name.startsWith(`${hashPart}-r`) && !name.includes('.tmp-') && name !== key;
    const deadTemp = name.startsWith(`${hashPart}-r`) && name.includes('.tmp-') && Date.now() - statSync(path).mtimeMs > 3_600_000;
    if (oldRecipe || deadTemp) rmSync(path, { recursive: true, force: true });
  }
}

/** How many further missing versions an install may swap on its own before it gives up. */
const MAX_DISCOVERED_SWAPS = 40;

/** `ERR_PNPM_FETCH_404 … GET <registry>/@scope/name/-/name-1.2.3.tgz` → the package and version. */
export function missingTarball(output: string): { name: string; version: string } | null {
  const m = output.match(/ERR_PNPM_FETCH_404\] GET \S*?\/((?:@[^/\s]+\/)?[^/\s]+)\/-\/([^/\s]+)\.tgz/);
  if (!m) return null;
  const name = m[1]!;
  const base = name.split('/').pop()!;
  if (!m[2]!.startsWith(`${base}-`)) return null;
  return { name, version: m[2]!.slice(base.length + 1) };
}

/** The highest published version below `version` in the same major (same minor for 0.x). */
async function nearestEarlier(registry: string, name: string, version: string): Promise<string> {
  const all: string[] = JSON.parse(await run('npm', ['view', name, 'versions', '--json', `--registry=${registry}`], { cwd: ROOT }));
  const [major, minor] = version.split('.');
  const same = (v: string) => v.split('.')[0] === major && (major !== '0' || v.split('.')[1] === minor);
  const best = (Array.isArray(all) ? all : [all])
    .filter((v) => !v.includes('-') && same(v) && Bun.semver.order(v, version) < 0)
    .sort((a, b) => Bun.semver.order(b, a))[0];
  if (!best) throw new InstallError(`${name}@${version} is not on the registry and no earlier ${major}.x is`);
  return best;
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The registry npm is configured with here (read outside the vben tree, whose .npmrc names another). */
async function npmRegistry(): Promise<string> {
  const out = await run('npm', ['config', 'get', 'registry'], { cwd: ROOT });
  const url = out.trim();
  if (!/^https?:\/\//.test(url)) throw new InstallError(`npm config get registry gave ${JSON.stringify(url)}`);
  return url.endsWith('/') ? url : `${url}/`;
}

async function installPnpm(registry: string, pnpmEntry: string) {
  if (existsSync(pnpmEntry)) return;
  const prefix = join(pnpmEntry, '../../../..');
  mkdirSync(prefix, { recursive: true });
  await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--no-package-lock', `--registry=${registry}`, '--prefix', prefix, `pnpm@${PNPM_VERSION}`], {
    cwd: prefix,
  });
}

/**
 * Child environment: ours (this network's CA settings included: NODE_EXTRA_CA_CERTS, npm's
 * cafile), our Node and pnpm first on PATH, and the registry for npx too.
 */
function pnpmEnv(registry: string, cafile: string | null, work: string, pnpm: string): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    // Its scripts call `pnpm` (bin/pnpm.mjs runs on `node`: ours, first on PATH).
    PATH: `${join(NODE_BIN, '..')}:${join(pnpm, '../../../.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    TMPDIR: work,
    npm_config_registry: registry,
    ...(cafile ? { npm_config_cafile: cafile } : {}),
    // No telemetry, update checks or prompts; the lockfile is the one patched above.
    CI: 'true',
    DO_NOT_TRACK: '1',
    TURBO_TELEMETRY_DISABLED: '1',
    npm_config_update_notifier: 'false',
  };
}

/** npm's cafile setting (this network may sit behind its own certificate authority), or null. */
async function npmCafile(): Promise<string | null> {
  const out = (await run('npm', ['config', 'get', 'cafile'], { cwd: ROOT })).trim();
  return out && out !== 'null' && out !== 'undefined' && existsSync(out) ? out : null;
}

/** Replaces `from` by `to` exactly `count` times in `text`, or stops the install saying which fix no longer applies. */
function replaceExactly(text: string, from: string | RegExp, to: string, count: number, what: string): string {
  const re = typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : new RegExp(from.source, 'gm');
  const found = text.match(re)?.length ?? 0;
  if (found !== count) throw new InstallError(`install fix "${what}" expected ${count} match(es) of ${re} and found ${found}: not the tarball this harness knows`);
  return text.replace(re, to);
}

/** INSTALL_FIXES, applied to the unpacked tree. */
async function applyFixes(tree: string, registry: string) {
  const lockPath = join(tree, 'pnpm-lock.yaml');
  const wsPath = join(tree, 'pnpm-workspace.yaml');
  let lock = readFileSync(lockPath, 'utf8');
  let ws = readFileSync(wsPath, 'utf8');

  // 1. The root importer's vue specifier, as package.json (catalog `vue: ^3.5.40`) has it.
  lock = replaceExactly(lock, /^(importers:\n\n  \.:\n(?:(?!\n\n)[\s\S])*?\n      vue:\n        specifier: )\^3\.5\.41$/, '$1^3.5.40', 1, 'root vue specifier');

  // 2. Versions the registry lacks (their manifests looked up a few at a time).
  const manifests = await mapLimit(MISSING_VERSIONS, 6, (m) => manifest(registry, `${m.name}@${m.to}`));
  for (const [i, m] of MISSING_VERSIONS.entries()) {
    if (m.catalog) ws = replaceExactly(ws, new RegExp(`^  ${m.name}: \\^${m.from.replace(/\./g, '\\.')}$`), `  ${m.name}: ${m.to}`, 1, `${m.name} catalog`);
    lock = await swapLockedVersion(lock, m.name, m.from, m.to, manifests[i]!, registry, m.catalog);
  }
  writeFileSync(lockPath, lock);
  writeFileSync(wsPath, ws);

  // 3. No mock backend from the Vite plugin: the API base is ours.
  writeFileSync(join(tree, VBEN_APP.dir, '.env.development.local'), '# edge-admin test harness: the API is ours, not the mock backend\nVITE_NITRO_MOCK=false\n');
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  dist: { integrity: string };
}

async function manifest(registry: string, spec: string): Promise<Manifest> {
  const out = await run('npm', ['view', spec, '--json', `--registry=${registry}`], { cwd: ROOT });
  const m = JSON.parse(out);
  if (Array.isArray(m) || !m?.dist?.integrity) throw new InstallError(`npm view ${spec} gave no single manifest`);
  return m;
}

/** The lines of one top-level section (`packages:`, `snapshots:`…) split into its entries. */
function entriesOf(lock: string, section: string) {
  const start = lock.indexOf(`\n${section}:\n`);
  if (start < 0) throw new InstallError(`pnpm-lock.yaml has no ${section} section`);
  const bodyStart = start + section.length + 3;
  const next = lock.slice(bodyStart).search(/\n[a-z]\w*:\n/);
  const bodyEnd = next < 0 ? lock.length : bodyStart + next + 1;
  const body = lock.slice(bodyStart, bodyEnd);
  const entries = body.split(/\n(?=  \S)/).map((text) => ({ key: text.match(/^\s*(.*?):(?: \{\})?\n?/)?.[1]?.replace(/^'|'$/g, '') ?? '', text }));
  return { bodyStart, bodyEnd, entries };
}

/** A range as YAML needs it: `>=3.2.0` or `^1 || ^2` quoted, `^3.5.40` as it is. */
const yamlScalar = (v: string) => (/^[\^~\w.-]+$/.test(v) ? v : `'${v.replace(/'/g, "''")}'`);
const keyOf = (name: string, version: string) => (name.startsWith('@') ? `'${name}@${version}'` : `${name}@${version}`);
const versionOf = (ref: string) => ref.split('(')[0]!;

/**
 * Rewrites one locked package to another version of it: its catalog entry, every reference to it,
 * its `packages:` entry (integrity from the registry) and its `snapshots:` entry, whose
 * dependencies are re-chosen from the new manifest among versions the lockfile already holds (a new
 * exact version without dependencies of its own is added; anything else stops the install).
 */
export async function swapLockedVersion(lock: string, name: string, from: string, to: string, m: Manifest, registry: string, inCatalog: boolean): Promise<string> {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // catalogs: default: name: specifier/version
  if (inCatalog) lock = replaceExactly(lock, new RegExp(`^(    '?${esc(name)}'?:\\n      specifier: )\\^${esc(from)}\\n      version: ${esc(from)}$`), `$1${to}\n      version: ${to}`, 1, `${name} lockfile catalog`);
  // importer references: `version: 1.4.5(...)` under a `name:` key
  lock = lock.replace(new RegExp(`(\\n      '?${esc(name)}'?:\\n        specifier: [^\\n]+\\n        version: )${esc(from)}(?=[(\\n])`, 'g'), `$1${to}`);
  // references from other snapshots: `name: 1.4.5(...)`
  lock = lock.replace(new RegExp(`(\\n      '?${esc(name)}'?: )${esc(from)}(?=[(\\n])`, 'g'), `$1${to}`);

  // packages: entry
  const pk = entriesOf(lock, 'packages');
  const pkEntry = pk.entries.find((e) => e.key === `${name}@${from}`);
  if (!pkEntry) throw new InstallError(`pnpm-lock.yaml has no packages entry ${name}@${from}`);
  let pkText = `  ${keyOf(name, to)}:\n    resolution: {integrity: ${m.dist.integrity}}\n`;
  if (m.peerDependencies && Object.keys(m.peerDependencies).length) {
    pkText += `    peerDependencies:\n${Object.entries(m.peerDependencies).map(([n, r]) => `      ${n.startsWith('@') ? `'${n}'` : n}: ${yamlScalar(r)}\n`).join('')}`;
  }
  const added: string[] = [];
  const snapshotsBefore = entriesOf(lock, 'snapshots');
  const snEntry = snapshotsBefore.entries.find((e) => versionOf(e.key.slice(name.length + 1)) === from && e.key.startsWith(`${name}@`));
  if (!snEntry) throw new InstallError(`pnpm-lock.yaml has no snapshots entry for ${name}@${from}`);
  const oldDeps = new Map<string, string>();
  for (const line of snEntry.text.split('\n')) {
    const d = line.match(/^      '?([^':]+)'?: (\S+)$/);
    if (d) oldDeps.set(d[1]!, d[2]!);
  }
  const newDeps: [string, string][] = [];
  for (const [dep, range] of Object.entries(m.dependencies ?? {})) {
    const old = oldDeps.get(dep);
    if (old && Bun.semver.satisfies(versionOf(old), range)) {
      newDeps.push([dep, old]);
      continue;
    }
    // Another snapshot of that package the lockfile already holds.
    const other = snapshotsBefore.entries
      .filter((e) => e.key.startsWith(`${dep}@`) && Bun.semver.satisfies(versionOf(e.key.slice(dep.length + 1)), range))
      .map((e) => e.key.slice(dep.length + 1))
      .sort((a, b) => Bun.semver.order(versionOf(b), versionOf(a)))[0];
    if (other) {
      newDeps.push([dep, other]);
      continue;
    }
    // An exact version the lockfile lacks: fine when it depends on nothing itself.
    const exact = range.match(/^\d+\.\d+\.\d+$/)?.[0];
    if (!exact) throw new InstallError(`${name}@${to} needs ${dep}@${range}, which pnpm-lock.yaml cannot satisfy`);
    const dm = await manifest(registry, `${dep}@${exact}`);
    if (Object.keys(dm.dependencies ?? {}).length || Object.keys(dm.peerDependencies ?? {}).length) {
      throw new InstallError(`${name}@${to} needs ${dep}@${exact}, which has dependencies of its own`);
    }
    added.push(`  ${keyOf(dep, exact)}:\n    resolution: {integrity: ${dm.dist.integrity}}\n`);
    newDeps.push([dep, exact]);
  }
  lock = lock.slice(0, pk.bodyStart) + pk.entries.map((e) => (e === pkEntry ? pkText + '\n' : e.text + '\n')).join('').replace(/\n+$/, '\n\n') + added.map((a) => a + '\n').join('') + lock.slice(pk.bodyEnd);

  // snapshots: entry (same peer suffix, new dependencies) plus the added leaf packages
  const sn = entriesOf(lock, 'snapshots');
  const snE = sn.entries.find((e) => e.key.startsWith(`${name}@`) && versionOf(e.key.slice(name.length + 1)) === from)!;
  const suffix = snE.key.slice(name.length + 1 + from.length);
  const transitive = snE.text.match(/\n    transitivePeerDependencies:\n(?:      - .*\n?)+/)?.[0] ?? '';
  newDeps.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const depsText = newDeps.length ? `\n    dependencies:\n${newDeps.map(([n, v]) => `      ${n.startsWith('@') ? `'${n}'` : n}: ${v}`).join('\n')}` : '';
  const snText = newDeps.length || transitive ? `  ${keyOf(name, to + suffix)}:${depsText}${transitive ? transitive.replace(/\n?$/, '') : ''}\n` : `  ${keyOf(name, to + suffix)}: {}\n`;
  const addedSnapshots = added.map((a) => `${a.split('\n')[0]!.replace(/:$/, ': {}')}\n`);
  lock = lock.slice(0, sn.bodyStart) + sn.entries.map((e) => (e === snE ? snText + '\n' : e.text + '\n')).join('').replace(/\n+$/, '\n\n') + addedSnapshots.map((a) => a + '\n').join('') + lock.slice(sn.bodyEnd);
  if (lock.includes(`${name}@${from}`)) throw new InstallError(`install fix for ${name}: ${name}@${from} is still referenced in pnpm-lock.yaml`);
  return lock;
}

/** Runs a command to completion; a non-zero exit is an InstallError with the output's tail. */
function run(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs?: number }): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? (process.env as Record<string, string>), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    const keep = (b: Buffer) => (out = (out + b.toString()).slice(-200_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const timer = setTimeout(() => killGroup(child), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(new InstallError(`${cmd} could not start: ${e.message}`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) ok(out);
      else fail(new InstallError(`${[cmd, ...args.map((a) => a.replace(/^.*\/pnpm\.mjs$/, 'pnpm'))].join(' ')} exited with ${code ?? signal}:\n${tail(out, 40)}`));
    });
  });
}

function tail(text: string, lines: number) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    /* already gone */
  }
}

export interface VbenDevServer {
  url: string;
  /** Milliseconds from spawn to the first answer of its index page. */
  startMs: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the app's Vite dev server on `port` (strict) with VITE_GLOB_API_URL = apiBase. Vite lets
 * VITE_* variables of the environment override the .env files; vben's own env loader reads the
 * mode from npm_lifecycle_script, as `pnpm run dev` would set it.
 */
export async function startVbenDevServer(install: VbenInstall, apiBase: string, port: number, timeoutMs = 180_000): Promise<VbenDevServer> {
  const t0 = performance.now();
  // `pnpm vite` in the app finds the root's vite (a root devDependency), as here.
  const vite = [install.appDir, install.root].map((d) => join(d, 'node_modules/vite/bin/vite.js')).find((f) => existsSync(f));
  if (!vite) throw new Error(`no vite under ${install.appDir} or ${install.root}`);
  const child = spawn(install.node, [vite, '--mode', 'development', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
    cwd: install.appDir,
    env: {
      ...(process.env as Record<string, string>),
      PATH: `${join(install.node, '..')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      npm_lifecycle_script: 'pnpm vite --mode development',
      VITE_GLOB_API_URL: apiBase,
      NODE_ENV: 'development',
      CI: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (b: Buffer) => (out = (out + b.toString()).slice(-50_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killGroup(child);
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`vben dev server exited with ${child.exitCode}:\n${tail(out, 40)}`);
    const up = await fetch(`${url}/`, { signal: AbortSignal.timeout(5000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`vben dev server did not answer on ${url} within ${timeoutMs} ms:\n${tail(out, 40)}`);
    }
    await Bun.sleep(250);
  }
  return { url, startMs: Math.round(performance.now() - t0), output: () => out, stop };
}

/** One request the page sent to our API base, with what came back. */
export interface ApiCall {
  method: string;
  /** Path and query relative to the API base, e.g. `/auth/login`. */
  path: string;
  body: unknown;
  headers: Record<string, string>;
  status: number | null;
  /** Why it got no response (e.g. a CORS refusal), when it got none. */
  failure: string | null;
  response: unknown;
}

export interface VbenPage {
  page: Page;
  context: BrowserContext;
  /** Requests sent to the API base, in order (CORS preflights are not seen by the page). */
  apiCalls: ApiCall[];
  /** Requests to any other origin than the dev server and the API: refused (no internet here). */
  blocked: string[];
  /** Iconify icons (`prefix:name`) answered from the installed icon sets. */
  iconsServed: string[];
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** Console errors (failed loads of blocked outside resources among them). */
  consoleErrors: string[];
  close(): Promise<void>;
}

/** Where @iconify/vue asks for icon data by name (menu and button icons are Iconify names). */
const ICONIFY_HOSTS = new Set(['api.iconify.design', 'api.simplesvg.com', 'api.unisvg.com']);

/** The icon sets vben installs itself (@iconify/json, for its Tailwind icons), or null. */
function iconSetsDir(install: VbenInstall): string | null {
  const store = join(install.root, 'node_modules/.pnpm');
  const dir = existsSync(store) ? readdirSync(store).find((d) => d.startsWith('@iconify+json@')) : undefined;
  return dir ? join(store, dir, 'node_modules/@iconify/json/json') : null;
}

interface IconSet {
  prefix: string;
  icons: Record<string, unknown>;
  aliases?: Record<string, { parent: string }>;
  width?: number;
  height?: number;
  lastModified?: number;
}

/** What the Iconify API answers to `/<prefix>.json?icons=a,b`, from the icon set on disk. */
function iconifyAnswer(set: IconSet, names: string[]) {
  const icons: Record<string, unknown> = {};
  const aliases: Record<string, unknown> = {};
  const notFound: string[] = [];
  const add = (name: string, depth: number) => {
    if (set.icons[name]) icons[name] = set.icons[name];
    else if (set.aliases?.[name] && depth < 8) {
      aliases[name] = set.aliases[name];
      add(set.aliases[name].parent, depth + 1);
    } else notFound.push(name);
  };
  for (const n of names) add(n, 0);
  return { prefix: set.prefix, icons, aliases, width: set.width, height: set.height, lastModified: set.lastModified, ...(notFound.length ? { not_found: notFound } : {}) };
}

/**
 * Chromium (Debian's, through playwright-core) with a page that records what vben sends to
 * `apiBase` and refuses every other outside request at once (avatars, logos…: without this the
 * page would wait on hosts this network cannot reach). Iconify API requests are answered from
 * the icon sets installed with vben, as the real API would: the sidebar's icons can show offline.
 */
export async function openVbenPage(devUrl: string, apiBase: string, install?: VbenInstall): Promise<VbenPage> {
  const browser = await launchChromium();
  const { context } = browser;
  const apiCalls: ApiCall[] = [];
  const blocked: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  const dev = new URL(devUrl).origin;
  const api = new URL(apiBase);
  const apiPrefix = apiBase.replace(/\/$/, '');
  const iconDir = install ? iconSetsDir(install) : null;
  const iconSets = new Map<string, IconSet | null>();
  const iconsServed: string[] = [];
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.origin === dev || u.origin === api.origin || u.protocol === 'data:' || u.protocol === 'blob:') return route.continue();
    const iconPath = u.pathname.match(/^\/([a-z0-9-]+)\.json$/);
    if (iconDir && ICONIFY_HOSTS.has(u.hostname) && iconPath && u.searchParams.has('icons')) {
      const prefix = iconPath[1]!;
      if (!iconSets.has(prefix)) {
        const file = join(iconDir, `${prefix}.json`);
        iconSets.set(prefix, existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as IconSet) : null);
      }
      const set = iconSets.get(prefix);
      if (!set) return route.fulfill({ status: 404, body: '404' });
      const names = u.searchParams.get('icons')!.split(',').filter(Boolean);
      iconsServed.push(...names.map((n) => `${prefix}:${n}`));
      return route.fulfill({ status: 200, contentType: 'application/json', headers: { 'access-control-allow-origin': '*' }, body: JSON.stringify(iconifyAnswer(set, names)) });
    }
    blocked.push(`${route.request().method()} ${u.origin}${u.pathname}`);
    return route.abort('internetdisconnected');
  });
  const calls = new Map<Request, ApiCall>();
  const page = await context.newPage();
  page.on('request', (req) => {
    if (!req.url().startsWith(apiPrefix)) return;
    let body: unknown = req.postData();
    try {
      body = body == null ? null : JSON.parse(body as string);
    } catch {
      /* not JSON: keep the text */
    }
    const call: ApiCall = { method: req.method(), path: req.url().slice(apiPrefix.length), body, headers: req.headers(), status: null, failure: null, response: null };
    calls.set(req, call);
    apiCalls.push(call);
  });
  page.on('requestfinished', async (req) => {
    const call = calls.get(req);
    if (!call) return;
    const res = await req.response();
    call.status = res?.status() ?? null;
    call.response = await res?.json().catch(() => res.text().catch(() => null));
  });
  page.on('requestfailed', (req) => {
    const call = calls.get(req);
    if (call) call.failure = req.failure()?.errorText ?? 'failed';
  });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { page, context, apiCalls, blocked, iconsServed, pageErrors, consoleErrors, close: () => browser.close() };
}

if (import.meta.main) {
  const r = await prepareVben((l) => console.log(l));
  if (!r.ok) {
    console.log(`vben cannot be installed here: ${r.reason}`);
    process.exit(1);
  }
  console.log(JSON.stringify({ root: r.install.root, cached: r.install.cached, ms: Math.round(r.install.ms), timings: r.install.timings }, null, 2));
}
