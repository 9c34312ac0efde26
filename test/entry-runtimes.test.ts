import { afterAll, describe, expect, test } from 'bun:test';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DENO_PERMISSIONS, ROOT, runtimeBinary, serverCommand, SERVER_RUNTIMES, type ServerRuntime } from '../scripts/server-commands.ts';

// The three server entries as `npm start`, `npm run start:deno` and `npm run start:node` run them:
// same environment variables, same data folder. (Bun's own start-up details: entry-bun.test.ts.)
const dir = mkdtempSync(join(tmpdir(), 'entry-rt-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function cleanEnv(env: Record<string, string>) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), HOST: '127.0.0.1', PORT: '0', CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', ...env };
}

/** Started once its URL is logged, and (when `until` is given) once the output also matches it: the banner with the password comes after the URL line. */
async function start(runtime: ServerRuntime, env: Record<string, string>, until?: RegExp) {
  const [cmd, ...args] = serverCommand(runtime);
  const p = spawn(cmd!, args, { cwd: ROOT, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 200; i++) {
    const url = out.match(/"url":"(http:\/\/[^"]+)"/)?.[1];
    if (url && (!until || until.test(out))) return { p, base: url, output: () => out };
    if (p.exitCode !== null) break;
    await Bun.sleep(100);
  }
  throw new Error(`${runtime} did not start:\n${out}`);
}

async function stop(p: ChildProcess) {
  p.kill('SIGTERM');
  if (p.exitCode === null) await new Promise((r) => p.once('exit', r));
}

const login = (base: string, password: string) =>
  fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password }) });

describe('server runtimes', () => {
  test('npm run start / start:deno / start:node are the commands the tests and the benchmark run', () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const runtime of SERVER_RUNTIMES) {
      const [, ...args] = serverCommand(runtime);
      expect(scripts[runtime === 'bun' ? 'start' : `start:${runtime}`]).toBe([runtime, ...args].join(' '));
    }
    expect(serverCommand('deno')).toContain('--allow-ffi');
    expect(DENO_PERMISSIONS).not.toContain('--allow-all');
  });

  test('every runtime comes from node_modules/.bin (no global install needed)', () => {
    for (const runtime of SERVER_RUNTIMES) {
      const [bin] = serverCommand(runtime);
      expect(bin).toBe(join(ROOT, 'node_modules/.bin', runtime));
      const r = spawnSync(bin!, ['--version'], { encoding: 'utf8' });
      expect(r.status, `${runtime} --version`).toBe(0);
    }
    // node:sqlite needs Node ≥ 22.13
    const v = spawnSync(serverCommand('node')[0]!, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    expect(Number(v.split('.')[0])).toBeGreaterThanOrEqual(23);
    // a runtime missing from node_modules is an error that says how to fix it, never a skip
    expect(() => runtimeBinary('deno', '/nonexistent')).toThrow('npm ci');
  }, 30_000);

  test('one data folder, three runtimes: made by one, opened by the others (password, sessions, files)', async () => {
    mkdirSync(join(dir, 'shared'));
    const env = { DATABASE_PATH: join(dir, 'shared', 'admin.db'), FILES_DIR: join(dir, 'shared', 'files') };
    const order: ServerRuntime[] = ['bun', 'deno', 'node', 'bun'];
    let password = '';
    let token = '';
    let fileId = 0;
    for (const [i, runtime] of order.entries()) {
      const s = await start(runtime, env, i === 0 ? /password "[^"]+"/ : undefined);
      const out = s.output();
      if (i === 0) {
        password = out.match(/password "([^"]+)"/)?.[1] ?? '';
        expect(password.length).toBeGreaterThan(10);
        expect(existsSync(join(dir, 'shared', '.jwt-secret'))).toBe(true);
      } else {
        expect(out, runtime).not.toContain('password "');
        expect(out, runtime).not.toContain('migrations applied');
      }
      // the token of the first runtime still works (same secret, same session rows)
      if (token) {
        const info = await fetch(`${s.base}/app/sysLoginUser/getLoginUserInformation`, { headers: { authorization: `Bearer ${token}` } });
        expect(info.status, runtime).toBe(200);
      }
      // the argon2id hash made by the first runtime verifies here
      const res = await login(s.base, password);
      expect(res.status, runtime).toBe(200);
      const fresh = ((await res.json()) as { data: { token: string } }).data.token;
      token ||= fresh;
      // a file uploaded by the first runtime downloads here, byte for byte
      if (i === 0) {
        const form = new FormData();
        form.append('file', new File([new TextEncoder().encode('shared bytes')], 'shared.txt', { type: 'text/plain' }));
        const up = await fetch(`${s.base}/app/sysFile/upload`, { method: 'POST', headers: { authorization: `Bearer ${fresh}` }, body: form });
        expect(up.status).toBe(200);
        fileId = ((await up.json()) as { data: { id: number } }).data.id;
      }
      const detail = (await (await fetch(`${s.base}/app/sysFile/detail?id=${fileId}`, { headers: { authorization: `Bearer ${fresh}` } })).json()) as { data: { url: string } };
      const down = await fetch(new URL(detail.data.url, s.base));
      expect(await down.text(), runtime).toBe('shared bytes');
      await stop(s.p);
    }
  }, 90_000);

  test.each(SERVER_RUNTIMES.filter((r) => r !== 'bun'))('%s: a bad configuration stops the start with one clear line', (runtime) => {
    const [cmd, ...args] = serverCommand(runtime);
    const sub = join(dir, `bad-${runtime}`);
    const r = spawnSync(cmd!, args, { cwd: ROOT, env: cleanEnv({ DATABASE_PATH: join(sub, 'admin.db'), FILES_DIR: join(sub, 'files'), PORT: 'abc' }), encoding: 'utf8', timeout: 20_000 });
    expect(r.status).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith('Invalid configuration: PORT');
  }, 30_000);
});
