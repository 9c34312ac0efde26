import { afterAll, describe, expect, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './e2e/servers.ts';

/*
 * `npm run dev:worker` (issue 25): one line per step, the URL and the credentials last, wrangler's
 * own output (800+ lines on a first start) in the log file it names. Run for real (wrangler, local
 * workerd, D1 and R2) with its vars file, state and log moved into a temporary folder.
 */

const ROOT = join(import.meta.dir, '..');
const dir = mkdtempSync(join(tmpdir(), 'dev-worker-'));
const children: ChildProcess[] = [];
afterAll(() => {
  // The script's whole process group: wrangler and its workerd too.
  for (const p of children) if (p.exitCode === null && p.pid) process.kill(-p.pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const paths = { DEV_WORKER_VARS: join(dir, 'dev.vars'), DEV_WORKER_STATE: join(dir, 'state'), DEV_WORKER_LOG: join(dir, 'logs', 'dev-worker.log') };
const MIGRATIONS = readdirSync(join(ROOT, 'migrations')).filter((f) => f.endsWith('.sql')).length;

/** Starts the script; resolves with its stdout lines once `until` matches one (or it exits). */
async function run(args: string[], until: RegExp) {
  const p = spawn(process.execPath, [join(ROOT, 'scripts/dev-worker.ts'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, TMPDIR: tmpdir(), ...paths },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(p);
  let out = '';
  let err = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
  const deadline = Date.now() + 150_000;
  while (!out.split('\n').some((l) => until.test(l)) && p.exitCode === null && Date.now() < deadline) await Bun.sleep(200);
  return { p, lines: () => out.trim().split('\n'), err: () => err, exited };
}

describe('npm run dev:worker', () => {
  test('one line per step, then the URL and the credentials last; wrangler writes to the named log', async () => {
    const [port, inspector] = [await freePort(), await freePort()];
    const first = await run(['--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--var', 'CAPTCHA_ENABLED:false'], /^log in: /);
    const lines = first.lines();
    const url = `http://127.0.0.1:${port}`;
    expect({ lines, err: first.err() }).toEqual({
      lines: [
        `secrets: ${paths.DEV_WORKER_VARS} (generated JWT_SECRET and ADMIN_PASSWORD)`,
        `migrations applied: ${MIGRATIONS}  [${paths.DEV_WORKER_STATE}]`,
        `wrangler dev: starting, its output goes to ${paths.DEV_WORKER_LOG} (tail -f it to follow requests)`,
        `ready: ${url}  (API reference and login helper: ${url}/docs)`,
        expect.stringMatching(new RegExp(`^log in: name "admin", password "[A-Za-z0-9_-]{24}" \\(ADMIN_PASSWORD in ${paths.DEV_WORKER_VARS}\\)$`)),
      ],
      err: '',
    });
    const password = lines[4]!.match(/password "([^"]+)"/)![1]!;
    expect(readFileSync(paths.DEV_WORKER_VARS, 'utf8')).toContain(`ADMIN_PASSWORD="${password}"`);
    // What no longer scrolls past: wrangler's tables and banners are all in the log.
    const log = readFileSync(paths.DEV_WORKER_LOG, 'utf8');
    expect(log.split('\n').length).toBeGreaterThan(100);
    expect(log).toContain('0001_init.sql');
    expect(log).toContain(`Ready on ${url}`);
    // The printed credentials log in.
    const login = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password }) });
    expect(login.status).toBe(200);
    first.p.kill('SIGINT');
    await first.exited;

    // Again: the secrets are kept, nothing is left to migrate, and the note about a used database.
    const again = await run(['--ip', '127.0.0.1', '--port', String(await freePort()), '--inspector-port', String(await freePort())], /^log in: /);
    expect(again.lines().slice(0, 2)).toEqual([`secrets: ${paths.DEV_WORKER_VARS} (kept)`, `migrations applied: 0 (the local database is up to date)  [${paths.DEV_WORKER_STATE}]`]);
    expect(again.lines().at(-1)).toEndWith(`(ADMIN_PASSWORD in ${paths.DEV_WORKER_VARS}; a local database used before keeps the password it had)`);
    expect(again.lines().at(-1)).toContain(`password "${password}"`);
    again.p.kill('SIGINT');
    expect(existsSync(paths.DEV_WORKER_LOG)).toBe(true);
    await again.exited;
  }, 360_000);
});
