// How each server runtime starts the app, for the tests and the benchmark: the same commands as
// `npm start`, `npm run start:deno` and `npm run start:node` (test/entry.test.ts checks they agree).
// Every runtime comes from npm as a dev dependency (node_modules/.bin), never from a global install.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export type ServerRuntime = 'bun' | 'deno' | 'node';
export const SERVER_RUNTIMES: readonly ServerRuntime[] = ['bun', 'deno', 'node'];

/**
 * Deno's permissions: the listener (net), the database, files folder and migrations (read, write),
 * the configuration (env), ffi for @node-rs/argon2, a native addon (without it Deno's error
 * misleadingly blames npm's optional dependencies), and statfs for the free-space checks of uploads
 * and /health/ready.
 */
export const DENO_PERMISSIONS = ['--allow-net', '--allow-read', '--allow-write', '--allow-env', '--allow-ffi', '--allow-sys=statfs'];

/** The runtime's binary in node_modules/.bin; a missing one is an error, never a skip. */
export function runtimeBinary(runtime: ServerRuntime, root = ROOT): string {
  const bin = join(root, 'node_modules/.bin', runtime);
  if (!existsSync(bin)) throw new Error(`${runtime} not found at ${bin}: run \`npm ci\` (it is a dev dependency)`);
  return bin;
}

/** argv that starts the server entry of `runtime`, relative to ROOT (run it with cwd ROOT). */
export function serverCommand(runtime: ServerRuntime): string[] {
  const entry = `src/entry/${runtime}.ts`;
  if (runtime === 'deno') return [runtimeBinary('deno'), 'run', ...DENO_PERMISSIONS, entry];
  return [runtimeBinary(runtime), entry];
}
