import { afterAll, describe, expect, test } from 'bun:test';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEntry, startServer, stopServer } from './support/server-process.ts';

const dir = mkdtempSync(join(tmpdir(), 'entry-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const start = (env: Record<string, string>) => startServer(env, children);
const stop = stopServer;

describe('bun entry', () => {
  test('first start: migrations, admin with a password printed once, secret kept; restart keeps sessions', async () => {
    mkdirSync(join(dir, 'a'));
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
    await stop(first);

    const second = await start(env);
    expect(second.output()).not.toContain('password "');
    const info = await fetch(`${second.base}/app/sysLoginUser/getLoginUserInformation`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    await stop(second);
  }, 30_000);

  test('a body far over every limit still gets the enveloped 413 (not the runtime bare one)', async () => {
    mkdirSync(join(dir, 'b'));
    const s = await start({ DATABASE_PATH: join(dir, 'b', 'admin.db'), FILES_DIR: join(dir, 'b', 'files'), ADMIN_PASSWORD: 'Entry-Test-Pass-1' });
    const big = new Uint8Array(200 * 1024 * 1024);
    const res = await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { status: number; traceId: string };
    expect(body.status).toBe(413);
    expect(res.headers.get('x-trace-id')).toBe(body.traceId);
    await stop(s);
  }, 30_000);

  test.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT'],
    [{ NODE_ENV: 'production' }, 'Invalid configuration: JWT_SECRET'],
    [{ ADMIN_PASSWORD: 'password' }, 'Invalid configuration: ADMIN_PASSWORD'],
  ])('bad configuration %j stops the start with one clear line', (env, line) => {
    const sub = join(dir, `bad-${Object.keys(env)[0]}`);
    mkdirSync(sub);
    const r = runEntry({ DATABASE_PATH: join(sub, 'admin.db'), FILES_DIR: join(sub, 'files'), ...env });
    // 78 (EX_CONFIG): a supervisor stops restarting a misconfigured server.
    expect(r.status).toBe(78);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toStartWith(line);
  });
});
