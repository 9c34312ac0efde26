import { afterAll, describe, expect, test } from 'bun:test';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The real entry point as `npm start` runs it: a process with its own data directory.
const ENTRY = join(import.meta.dir, '../src/entry/bun.ts');
const dir = mkdtempSync(join(tmpdir(), 'entry-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let port = 3700 + Math.floor(Math.random() * 200);

function start(env: Record<string, string>) {
  const p = spawn(process.execPath, [ENTRY], {
    env: { ...process.env, HOST: '127.0.0.1', CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  return { p, output: () => out };
}

async function ready(url: string) {
  for (let i = 0; i < 150; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`not ready: ${url}`);
}

async function stop(p: ReturnType<typeof spawn>) {
  p.kill('SIGTERM');
  await new Promise((r) => p.once('exit', r));
}

describe('bun entry', () => {
  test('first start: migrations, admin with a password printed once, secret kept; restart keeps sessions', async () => {
    const env = { PORT: String(++port), DATABASE_PATH: join(dir, 'a', 'admin.db'), FILES_DIR: join(dir, 'a', 'files') };
    const base = `http://127.0.0.1:${env.PORT}`;
    const first = start(env);
    await ready(`${base}/health`);
    const m = first.output().match(/password "([^"]+)"/);
    expect(m).not.toBeNull();
    const password = m![1]!;
    expect(existsSync(env.DATABASE_PATH)).toBe(true);
    expect(existsSync(env.FILES_DIR)).toBe(true);
    const secretFile = join(dir, 'a', '.jwt-secret');
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    const login = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ loginName: 'admin', password }),
    });
    const token = ((await login.json()) as any).data.token as string;
    await stop(first.p);

    const second = start(env);
    await ready(`${base}/health`);
    expect(second.output()).not.toContain('password "');
    const info = await fetch(`${base}/app/sysLoginUser/getLoginUserInformation`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    await stop(second.p);
  }, 30_000);

  test.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT'],
    [{ NODE_ENV: 'production' }, 'Invalid configuration: JWT_SECRET'],
    [{ ADMIN_PASSWORD: 'password' }, 'Invalid configuration: ADMIN_PASSWORD'],
  ])('bad configuration %j stops the start with one clear line', (env, line) => {
    const sub = join(dir, `bad-${Object.keys(env)[0]}`);
    const r = spawnSync(process.execPath, [ENTRY], {
      env: { ...process.env, DATABASE_PATH: join(sub, 'admin.db'), FILES_DIR: join(sub, 'files'), PORT: String(++port), ...env },
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith(line);
  });
});
