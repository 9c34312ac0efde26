import { afterAll, describe, expect, test } from 'bun:test';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { damagedCopy } from './support/archive.ts';
import { cleanEnv, startServer, stopServer } from './support/server-process.ts';

/*
 * `npm run restore -- <archive>` end to end: a backup taken by a running Bun server is restored into
 * a fresh install; the same users, files and tokens (same JWT_SECRET) answer there. A damaged archive
 * or a running service is refused with nothing changed.
 */

const RESTORE = join(import.meta.dir, '../scripts/restore.ts');
const dir = mkdtempSync(join(tmpdir(), 'restore-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const PASSWORD = 'Restore-Pass-2026';
const JWT_SECRET = 'restore-test-secret-restore-test-secret-0123';
/** An install's settings; its folder is made (outside ./data the server creates only a path's last part). */
const install = (name: string) => {
  mkdirSync(join(dir, name), { recursive: true });
  return {
    DATABASE_PATH: join(dir, name, 'admin.db'),
    FILES_DIR: join(dir, name, 'files'),
    BACKUP_DIR: join(dir, name, 'backups'),
    ADMIN_PASSWORD: PASSWORD,
    JWT_SECRET,
  };
};
const runRestore = (archive: string, env: Record<string, string>) => {
  const r = spawnSync(process.execPath, [RESTORE, archive], { env: cleanEnv({ PORT: '1', ...env }), encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, out: r.stdout + r.stderr };
};

async function json(res: Response) {
  return (await res.json()) as { status: number; data: any; msg: string };
}

let archive = '';
let token = '';
let fileId = 0;
let orgId = 0;

describe('backup on one install, restore into another', () => {
  test('same users, files and tokens after the restore', async () => {
    const a = install('a');
    const s = await startServer(a, children);
    const login = await json(await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) }));
    token = login.data.token;
    const auth = { authorization: `Bearer ${token}` };
    const form = new FormData();
    form.append('file', new File(['restored bytes'], 'restored.txt', { type: 'text/plain' }));
    fileId = (await json(await fetch(`${s.base}/app/sysFile/upload`, { method: 'POST', headers: auth, body: form }))).data.id;
    // A user in an organisation: its count (org_user_counts, kept by triggers) must come along.
    const postA = async (path: string, body: unknown) => (await json(await fetch(`${s.base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }))).data;
    orgId = (await postA('/app/sysOrg/add', { name: 'Restored org', code: 'restored' })).id;
    expect((await postA('/app/sysUser/add', { loginName: 'inorg', password: PASSWORD, orgId })).orgId).toBe(orgId);
    const backup = await json(await fetch(`${s.base}/app/sysBackup/create`, { method: 'POST', headers: auth }));
    expect(backup.data.status).toBe('done');
    archive = join(a.BACKUP_DIR, backup.data.name);
    expect(await stopServer(s)).toBe(0);

    const b = install('b');
    const r = runRestore(archive, b);
    expect(r.status).toBe(0);
    expect(r.out).toContain(`Restored ${backup.data.name}`);
    expect(r.out).toContain('blobs: 1 added, 0 already present');
    expect(r.out).toMatch(/rows: .*users 2/);
    expect(readdirSync(join(dir, 'b')).filter((n) => n.startsWith('.'))).toEqual([]); // no staging or aside left

    const t = await startServer(b, children);
    const me = await fetch(`${t.base}/app/sysLoginUser/getLoginUserInformation`, { headers: auth });
    expect(me.status).toBe(200);
    const dl = await fetch(`${t.base}/app/sysFile/download?id=${fileId}`, { headers: auth });
    expect(dl.status).toBe(200);
    expect(await dl.text()).toBe('restored bytes');
    // The part-of searches work on the restored database (their index, migrations/0012, is in the snapshot).
    for (const params of [{ name: 'RESTORED' }, { contentType: 'plain' }]) {
      const found = await json(await fetch(`${t.base}/app/sysFile/page`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ params }) }));
      expect({ params, ids: found.data.records.map((f: { id: number }) => f.id) }).toEqual({ params, ids: [fileId] });
    }
    const relog = await fetch(`${t.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) });
    expect(relog.status).toBe(200);
    // The organisation's count came along with its triggers: the page totals from it, and a new user counts.
    const postB = async (path: string, body: unknown) => (await json(await fetch(`${t.base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) }))).data;
    const inOrg = await postB('/app/sysUser/page', { params: { orgId } });
    expect([inOrg.total, inOrg.records.map((u: { loginName: string }) => u.loginName)]).toEqual([1, ['inorg']]);
    await postB('/app/sysUser/add', { loginName: 'inorg2', password: PASSWORD, orgId });
    expect((await postB('/app/sysUser/page', { params: { orgId } })).total).toBe(2);
    // The backup that made the archive was running inside its own snapshot: it is not left running.
    const page = await json(await fetch(`${t.base}/app/sysBackup/page`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' }));
    expect(page.data.records.map((x: { status: string }) => x.status)).toEqual(['failed']);

    // While the service runs, a restore is refused and changes nothing.
    const refused = runRestore(archive, b);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain(`Restore refused, nothing changed: another process holds DATABASE_PATH=${b.DATABASE_PATH}`);
    expect((await fetch(`${t.base}/app/sysFile/download?id=${fileId}`, { headers: auth })).status).toBe(200);
    expect(await stopServer(t)).toBe(0);
    expect(readdirSync(join(dir, 'b')).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 90_000);

  test('a damaged archive is refused before anything is touched', () => {
    const c = install('c');
    mkdirSync(join(dir, 'c'), { recursive: true });
    writeFileSync(c.DATABASE_PATH, 'the current database');
    const damaged = damagedCopy(archive, join(dir, 'damaged.tar'), 'restored bytes');
    const r = runRestore(damaged, c);
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/Restore refused, nothing changed: member blobs\/[0-9a-f]{64} does not match its checksum/);
    expect(readFileSync(c.DATABASE_PATH, 'utf8')).toBe('the current database');
    expect(existsSync(c.FILES_DIR)).toBe(false);
    expect(readdirSync(join(dir, 'c'))).toEqual(['admin.db']);
  });

  test('a stale -wal beside the replaced database is removed, never replayed over the restored file', () => {
    const d = install('d');
    mkdirSync(join(dir, 'd'), { recursive: true });
    writeFileSync(`${d.DATABASE_PATH}-wal`, 'newer frames of another database');
    writeFileSync(`${d.DATABASE_PATH}-shm`, 'index');
    const r = runRestore(archive, d);
    expect(r.status).toBe(0);
    expect(existsSync(`${d.DATABASE_PATH}-wal`)).toBe(false);
    expect(existsSync(`${d.DATABASE_PATH}-shm`)).toBe(false);
  });
});
