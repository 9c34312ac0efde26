import { afterAll, describe, expect, test } from 'bun:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopEverything, workerServer } from './e2e/servers.ts';
import { damagedCopy } from './support/archive.ts';
import { cleanEnv, startServer, stopServer } from './support/server-process.ts';

/*
 * `npm run restore -- <archive> --to worker --local`: how a single-machine install moves to
 * Cloudflare, end to end on wrangler's local state. A Bun install makes users, a role, logs and
 * files and takes a backup; the archive is loaded into local D1/R2 through wrangler; `wrangler dev`
 * on that state answers with the same users, roles, logs and files, and the Bun install's token is
 * still valid with the same JWT_SECRET. A damaged archive, and a target that already has users,
 * are refused with nothing changed.
 */

const RESTORE = join(import.meta.dir, '../scripts/restore.ts');
const dir = mkdtempSync(join(tmpdir(), 'restore-worker-'));
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const p of children) p.kill('SIGKILL');
  await stopEverything();
  rmSync(dir, { recursive: true, force: true });
});
const PASSWORD = 'Move-To-Workers-2026';
const ALICE_PASSWORD = 'Alice-Moves-2026!';
const JWT_SECRET = 'restore-worker-secret-restore-worker-secret-42';
// Characters a naive SQL dump or wrangler's statement splitter would trip on.
const TRICKY = "O'Brien; -- not a comment /* nor this */ \"quoted\" ☃";

function runRestore(...args: string[]): Promise<{ status: number | null; out: string }> {
  const p = spawn(process.execPath, [RESTORE, ...args], { env: cleanEnv({ PORT: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(p);
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  return new Promise((ok) => p.once('exit', (status) => ok({ status, out })));
}

const post = async (base: string, path: string, body: unknown, token?: string) => {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { status: number; data: any; msg: string };
};
const get = async (base: string, path: string, token: string) =>
  (await (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: number; data: any };
const uploadFile = async (base: string, token: string, name: string, text: string) => {
  const form = new FormData();
  form.append('file', new File([text], name, { type: 'text/plain' }));
  const res = await fetch(`${base}/app/sysFile/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return ((await res.json()) as { data: { id: number } }).data.id;
};
/** What both installs must answer alike (signed file URLs carry their own expiry, so they are left out). */
async function snapshot(base: string, token: string) {
  const page = (path: string, body: unknown = { pageSize: 100 }) => post(base, path, body, token).then((r) => r.data);
  const files = await page('/app/sysFile/page');
  return {
    me: (await get(base, '/app/sysLoginUser/getLoginUserInformation', token)).data.loginName,
    users: (await page('/app/sysUser/page')).records,
    roles: (await page('/app/sysRole/page')).records,
    loginLog: await page('/app/sysLoginLog/page'),
    opLog: await page('/app/sysOpLog/page'),
    files: files.records.map(({ url: _, ...f }: { url: string }) => f),
    // The part-of searches (their index, migrations/0012, comes along with the schema).
    searches: {
      nickName: (await page('/app/sysUser/page', { params: { nickName: "'brien; --" } })).total,
      name: (await page('/app/sysFile/page', { params: { name: 'NOTES' } })).records.map((f: { id: number }) => f.id),
      contentType: (await page('/app/sysFile/page', { params: { contentType: 'plain' } })).records.map((f: { id: number }) => f.id),
    },
  };
}

describe('restore --to worker (wrangler dev local state)', () => {
  let archive = '';

  test('a Bun install moves to the Worker: same users, roles, logs and files; old token valid', async () => {
    mkdirSync(join(dir, 'bun'));
    const bun = await startServer(
      { DATABASE_PATH: join(dir, 'bun/admin.db'), FILES_DIR: join(dir, 'bun/files'), BACKUP_DIR: join(dir, 'bun/backups'), ADMIN_PASSWORD: PASSWORD, JWT_SECRET },
      children,
    );
    const token = (await post(bun.base, '/auth/login', { loginName: 'admin', password: PASSWORD })).data.token as string;
    expect((await post(bun.base, '/auth/login', { loginName: 'admin', password: 'wrong-password-1' })).status).toBe(401); // a failure row
    const role = (await post(bun.base, '/app/sysRole/add', { name: 'Auditor', code: 'auditor', remark: TRICKY }, token)).data;
    await post(bun.base, '/app/sysUser/add', { loginName: 'alice', password: ALICE_PASSWORD, nickName: TRICKY, roleIds: [role.id] }, token);
    const kept = await uploadFile(bun.base, token, 'notes.txt', 'hello worker');
    await uploadFile(bun.base, token, 'notes copy.txt', 'hello worker'); // same content: one blob
    const gone = await uploadFile(bun.base, token, 'gone.txt', 'deleted before the move');
    expect((await post(bun.base, '/app/sysFile/delete', { ids: [gone] }, token)).status).toBe(200);
    const before = await snapshot(bun.base, token);
    expect(before.users.map((u: { nickName: string }) => u.nickName)).toContain(TRICKY);
    expect(before.loginLog.total).toBeGreaterThanOrEqual(2);
    expect(before.searches).toEqual({ nickName: 1, name: [kept + 1, kept], contentType: [kept + 1, kept] });
    const backup = await post(bun.base, '/app/sysBackup/create', {}, token);
    expect(backup.data.status).toBe('done');
    archive = join(dir, 'bun/backups', backup.data.name);
    expect(await stopServer(bun)).toBe(0);

    const persist = join(dir, 'worker-state');
    const r = await runRestore(archive, '--to', 'worker', '--local', '--persist-to', persist);
    expect(r.out).toContain(`Restored ${backup.data.name}`);
    expect(r.status).toBe(0);
    expect(r.out).toMatch(/rows: .*users 2\b/);
    expect(r.out).toContain('blobs: 1 put into R2');

    const envFile = join(dir, 'empty.env');
    writeFileSync(envFile, '');
    // Another ADMIN_PASSWORD: the restored administrator must be the one that logs in.
    const worker = await workerServer(persist, false, envFile, { JWT_SECRET, ADMIN_PASSWORD: 'Not-The-Bun-Password-7' });
    try {
      const after = await snapshot(worker.baseUrl, token); // the Bun install's token
      expect(after).toEqual(before);
      const dl = await fetch(`${worker.baseUrl}/app/sysFile/download?id=${kept}`, { headers: { authorization: `Bearer ${token}` } });
      expect(dl.status).toBe(200);
      expect(await dl.text()).toBe('hello worker');
      // A password hashed by @node-rs/argon2 on Bun verifies with the Worker's WASM argon2id.
      const alice = await post(worker.baseUrl, '/auth/login', { loginName: 'alice', password: ALICE_PASSWORD });
      expect(alice.status).toBe(200);
      expect((await post(worker.baseUrl, '/auth/login', { loginName: 'admin', password: 'Not-The-Bun-Password-7' })).status).toBe(401);
      // The AUTOINCREMENT high-water mark came along: the deleted file's id is not handed out again.
      const fresh = await uploadFile(worker.baseUrl, token, 'new.txt', 'uploaded on the Worker');
      expect(fresh).toBeGreaterThan(gone);
    } finally {
      await worker.stop();
    }

    // The target now has users: without --replace it is refused and left as it was.
    const again = await runRestore(archive, '--to', 'worker', '--local', '--persist-to', persist);
    expect(again.status).toBe(1);
    expect(again.out).toContain("Restore refused, the Worker's data was not changed: the Worker's D1 database already holds 2 user(s): pass --replace");
  }, 600_000);

  test('a damaged archive is refused before wrangler is run', async () => {
    const damaged = damagedCopy(archive, join(dir, 'damaged.tar'), 'hello worker');
    const persist = join(dir, 'untouched-state');
    const r = await runRestore(damaged, '--to', 'worker', '--local', '--persist-to', persist);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/Restore refused, the Worker's data was not changed: member blobs\/[0-9a-f]{64} does not match its checksum/);
    expect(existsSync(persist)).toBe(false);
  }, 60_000);
});
