import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The real entry point as `npm start` runs it. */
export const ENTRY = join(import.meta.dir, '../../src/entry/bun.ts');

/** Only what the process needs from outside: CI's own ADMIN_PASSWORD, NODE_ENV… must not leak in. */
export function cleanEnv(env: Record<string, string>) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), HOST: '127.0.0.1', PORT: '0', CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', ...env };
}

export interface ServerProcess {
  p: ChildProcess;
  base: string;
  output: () => string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<number | string>;
}

/** Starts the entry on a free port (PORT=0) and reads the address from its "listening" log line. */
export async function startServer(env: Record<string, string>, children: ChildProcess[]): Promise<ServerProcess> {
  const p = spawn(process.execPath, [ENTRY], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | string>((r) => p.once('exit', (code, signal) => r(code ?? signal ?? -1)));
  for (let i = 0; i < 300; i++) {
    const url = out.match(/"url":"(http:\/\/[^"]+)"/)?.[1];
    if (url) return { p, base: url, output: () => out, exited };
    if (p.exitCode !== null) break;
    await Bun.sleep(100);
  }
  p.kill('SIGKILL');
  throw new Error(`did not start:\n${out}`);
}

/** SIGTERM, then the exit code. */
export async function stopServer(s: ServerProcess) {
  s.p.kill('SIGTERM');
  return s.exited;
}

/** Runs the entry to completion (for starts that must fail): exit status and stderr lines. */
export function runEntry(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [ENTRY], { env: cleanEnv(env), encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, stderr: r.stderr.trim(), lines: r.stderr.trim().split('\n').filter(Boolean) };
}
