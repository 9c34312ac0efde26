import { afterAll, describe, expect, test } from 'bun:test';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The real entry point as `npm start` runs it: a process with its own data directory.
const ENTRY = join(import.meta.dir, '../src/entry/bun.ts');
const dir = mkdtempSync(join(tmpdir(), 'entry-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Only what the process needs from outside: CI's own ADMIN_PASSWORD, NODE_ENV… must not leak in. */
function cleanEnv(env: Record<string, string>) {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), HOST: '127.0.0.1', PORT: '0', CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', ...env };
}

/** Starts the entry on a free port (PORT=0) and reads the address from its "listening" log line. */
async function start(env: Record<string, string>) {
  const p = spawn(process.execPath, [ENTRY], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 150; i++) {
    const url = out.match(/"url":"(http:\/\/[^"]+)"/)?.[1];
    if (url) return { p, base: url, output: () => out };
    await Bun.sleep(100);
  }
  throw new Error(`did not start:\n${out}`);
}

async function stop(p: ChildProcess) {
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
}

describe('bun entry', () => {
  test('first start: migrations, admin with a password printed once, secret kept; restart keeps sessions', async () => {
    const env = { DATABASE_PATH: join(dir, 'a', 'admin.db'), FILES_DIR: join(dir, 'a', 'files') };
    const first = await start(env);
    const m = first.output().match(/password "([^"]+)"/);
    expect(m).not.toBeNull();
    const password = m![1]!;
    expect(existsSync(env.DATABASE_PATH)).toBe(true);
    expect(existsSync(env.FILES_DIR)).toBe(true);
    expect(statSync(join(dir, 'a', '.jwt-secret')).mode & 0o777).toBe(0o600);
    const login = await fetch(`${first.base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ loginName: 'admin', password }),
    });
    const token = ((await login.json()) as any).data.token as string;
    await stop(first.p);

    const second = await start(env);
    expect(second.output()).not.toContain('password "');
    const info = await fetch(`${second.base}/app/sysLoginUser/getLoginUserInformation`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    await stop(second.p);
  }, 30_000);

  test('a body far over every limit still gets the enveloped 413 (not the runtime bare one)', async () => {
    const s = await start({ DATABASE_PATH: join(dir, 'b', 'admin.db'), FILES_DIR: join(dir, 'b', 'files'), ADMIN_PASSWORD: 'Entry-Test-Pass-1' });
    const big = new Uint8Array(200 * 1024 * 1024);
    const res = await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { status: number; traceId: string };
    expect(body.status).toBe(413);
    expect(res.headers.get('x-trace-id')).toBe(body.traceId);
    await stop(s.p);
  }, 30_000);

  test.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT'],
    [{ NODE_ENV: 'production' }, 'Invalid configuration: JWT_SECRET'],
    [{ ADMIN_PASSWORD: 'password' }, 'Invalid configuration: ADMIN_PASSWORD'],
  ])('bad configuration %j stops the start with one clear line', (env, line) => {
    const sub = join(dir, `bad-${Object.keys(env)[0]}`);
    const r = spawnSync(process.execPath, [ENTRY], {
      env: cleanEnv({ DATABASE_PATH: join(sub, 'admin.db'), FILES_DIR: join(sub, 'files'), ...env }),
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(line);
  });
});
