import { beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar-stream';
import { serverBackupArchives } from '../src/adapters/server/backup-archive.ts';
import { bunSqlExec, openBunSqlite } from '../src/adapters/bun/sqlite.ts';
import { scheduledBackup } from '../src/modules/backups/backups.service.ts';
import { Runner } from '../src/db/runner.ts';
import { makeTestApp, type TestApp } from './support/app.ts';
import { upload } from './support/files.ts';
import { userWithCodes } from './support/rbac.ts';
import { scratchDir } from './support/tmp-root.ts';

/*
 * sysBackup over HTTP: one tar archive per backup (snapshot + referenced blobs + manifest with
 * checksums), super admin only by default, op-log rows, scheduled backups with retention, 501 on
 * Workers (no archives port).
 */

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** An app with backups into a fresh folder, as the server start-up wires them. */
async function backupApp(env: Record<string, string> = {}) {
  const t = await makeTestApp({ env });
  const dir = scratchDir('backups');
  t.deps.backups = serverBackupArchives({ dir, sql: bunSqlExec(t.sqlite), openSqlite: openBunSqlite, blobs: t.deps.blobs! });
  return Object.assign(t, { backupDir: dir });
}

/** Members of a tar archive in order, with their bytes. */
async function untar(bytes: Uint8Array) {
  const members: { name: string; data: Uint8Array }[] = [];
  const ex = tar.extract();
  const done = (async () => {
    for await (const entry of ex) {
      const chunks: Uint8Array[] = [];
      for await (const c of entry) chunks.push(c as Uint8Array);
      members.push({ name: entry.header.name, data: new Uint8Array(Buffer.concat(chunks)) });
    }
  })();
  ex.end(bytes);
  await done;
  return members;
}

async function download(t: TestApp, token: string, id: number) {
  const res = await t.app.request(`/app/sysBackup/download?id=${id}`, { headers: { authorization: `Bearer ${token}` } });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

let t: Awaited<ReturnType<typeof backupApp>>;
let admin: string;
beforeAll(async () => {
  t = await backupApp();
  admin = await t.login();
});

describe('create and download', () => {
  test('one archive: the snapshot, every blob it references, a manifest with every checksum; a deleted file’s blob is not in it', async () => {
    const kept = (await upload(t, 'sysFile', admin, { filename: 'kept.txt', data: 'kept content' })).data;
    const twin = (await upload(t, 'sysFile', admin, { filename: 'twin.txt', data: 'kept content' })).data;
    const gone = (await upload(t, 'sysFile', admin, { filename: 'gone.txt', data: 'deleted before the backup' })).data;
    await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [gone.id] } });

    const r = await t.call('POST', '/app/sysBackup/create', { token: admin });
    expect(r.status).toBe(200);
    const b = r.data;
    expect(b).toMatchObject({ status: 'done', trigger: 'manual', createdBy: 1, errorMsg: null });
    expect(b.name).toMatch(/^backup-\d{8}T\d{6}Z-[0-9a-f]{8}\.tar$/);
    expect(readdirSync(t.backupDir)).toEqual([b.name]); // nothing temporary left beside it

    const { res, bytes } = await download(t, admin, b.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toContain(b.name);
    expect(bytes.byteLength).toBe(b.size);
    expect(sha(bytes)).toBe(b.sha256);

    const members = await untar(bytes);
    expect(members.map((m) => m.name)).toEqual(['database.sqlite', `blobs/${kept.sha256}`, 'manifest.json']);
    expect(twin.sha256).toBe(kept.sha256);
    expect(new TextDecoder().decode(members[1]!.data)).toBe('kept content');
    const manifest = JSON.parse(new TextDecoder().decode(members[2]!.data));
    expect(manifest).toMatchObject({ format: 'edge-admin-backup', formatVersion: 1, createdAt: b.createdAt });
    expect(manifest.migrations).toContain('0007_b_sys_backup.sql');
    expect(manifest.migrations[0]).toBe('0001_init.sql');
    expect(manifest.members).toEqual(members.slice(0, 2).map((m) => ({ path: m.name, size: m.data.byteLength, sha256: sha(m.data) })));

    // The snapshot is a complete database on its own, with the rows the manifest counts.
    const file = join(t.backupDir, 'check.sqlite');
    writeFileSync(file, members[0]!.data);
    const snap = new Database(file, { readonly: true });
    expect(snap.query('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    expect((snap.query('SELECT count(*) AS n FROM files').get() as { n: number }).n).toBe(2);
    expect(manifest.rowCounts.files).toBe(2);
    expect(manifest.rowCounts.users).toBe(t.count('users'));
    snap.close();
  });

  test('page, op-log rows for create and delete, delete removes the archive; unknown or deleted ids are 404 on download', async () => {
    const made = (await t.call('POST', '/app/sysBackup/create', { token: admin })).data;
    const page = await t.call('POST', '/app/sysBackup/page', { token: admin, body: { params: { status: 'done' } } });
    expect(page.status).toBe(200);
    expect(page.data.records[0]).toMatchObject({ id: made.id, status: 'done' });
    expect(existsSync(join(t.backupDir, made.name))).toBe(true);
    const del = await t.call('POST', '/app/sysBackup/delete', { token: admin, body: { ids: [made.id, 987654] } });
    expect(del.data).toEqual({ deleted: 1 });
    expect(existsSync(join(t.backupDir, made.name))).toBe(false);
    expect((await download(t, admin, made.id)).res.status).toBe(404);
    const log = t.sqlite.query(`SELECT action, status FROM op_log WHERE module = 'sysBackup' ORDER BY id`).all();
    expect(log).toContainEqual({ action: 'create', status: 200 });
    expect(log).toContainEqual({ action: 'delete', status: 200 });
  });

  test('a second backup while one runs → 409, nothing started', async () => {
    t.sqlite.run(`INSERT INTO backups (name, status, trigger_type, created_at) VALUES ('backup-running.tar', 'running', 'manual', '2026-01-01')`);
    const before = t.count('backups');
    const r = await t.call('POST', '/app/sysBackup/create', { token: admin });
    expect(r.status).toBe(409);
    expect(r.json.msg).toBe('A backup is already running');
    expect(t.count('backups')).toBe(before);
    t.sqlite.run(`DELETE FROM backups WHERE name = 'backup-running.tar'`);
  });

  test('a blob missing from storage fails the backup: 500, the record says why, no archive left', async () => {
    const f = await backupApp();
    const token = await f.login();
    const up = (await upload(f, 'sysFile', token, { filename: 'x.txt', data: 'will vanish' })).data;
    rmSync(join(f.filesDir, up.sha256.slice(0, 2), up.sha256.slice(2, 4), up.sha256));
    const r = await f.call('POST', '/app/sysBackup/create', { token });
    expect(r.status).toBe(500);
    const row = f.sqlite.query('SELECT status, error_msg FROM backups').get() as { status: string; error_msg: string };
    expect(row.status).toBe('failed');
    expect(row.error_msg).toContain(`blob ${up.sha256} referenced by the snapshot is missing`);
    expect(readdirSync(f.backupDir)).toEqual([]);
  });
});

describe('permissions', () => {
  test('super admin only by default: the codes are seeded as buttons no role holds; anonymous 401, without the code 403, with it 200', async () => {
    const seeded = t.sqlite
      .query(`SELECT permission FROM menus WHERE type = 'button' AND permission LIKE 'sys:backup:%' ORDER BY sort`)
      .all()
      .map((r) => (r as { permission: string }).permission);
    expect(seeded).toEqual(['sys:backup:page', 'sys:backup:create', 'sys:backup:download', 'sys:backup:delete']);
    expect(t.sqlite.query(`SELECT count(*) AS n FROM role_menu rm JOIN menus m ON m.id = rm.menu_id WHERE m.permission LIKE 'sys:backup:%'`).get()).toEqual({ n: 0 });

    expect((await t.call('POST', '/app/sysBackup/page', { body: {} })).status).toBe(401);
    const other = (await userWithCodes(t, ['sys:file:page'], 'fileclerk')).token;
    expect((await t.call('POST', '/app/sysBackup/page', { token: other, body: {} })).status).toBe(403);
    expect((await t.call('POST', '/app/sysBackup/create', { token: other })).status).toBe(403);
    expect((await download(t, other, 1)).res.status).toBe(403);
    const pager = (await userWithCodes(t, ['sys:backup:page'], 'backupviewer')).token;
    expect((await t.call('POST', '/app/sysBackup/page', { token: pager, body: {} })).status).toBe(200);
    expect((await t.call('POST', '/app/sysBackup/create', { token: pager })).status).toBe(403);
  });
});

describe('scheduled backups and retention', () => {
  test('each run makes a backup and an op-log row; only the newest BACKUP_KEEP scheduled ones stay; manual ones are kept', async () => {
    const s = await backupApp({ BACKUP_KEEP: '2' });
    const token = await s.login();
    const manual = (await s.call('POST', '/app/sysBackup/create', { token })).data;
    const names: string[] = [];
    for (let i = 0; i < 3; i++) {
      s.clock.advance(3600_000);
      const r = await scheduledBackup(s.deps, new Runner(s.deps));
      expect(r.status).toBe(200);
      names.push(r.name);
    }
    const rows = s.sqlite.query('SELECT name, trigger_type FROM backups ORDER BY id').all() as { name: string; trigger_type: string }[];
    expect(rows).toEqual([
      { name: manual.name, trigger_type: 'manual' },
      { name: names[1]!, trigger_type: 'scheduled' },
      { name: names[2]!, trigger_type: 'scheduled' },
    ]);
    expect(readdirSync(s.backupDir).sort()).toEqual([manual.name, names[1]!, names[2]!].sort());
    const ops = s.sqlite.query(`SELECT method, status, operator_id FROM op_log WHERE module = 'sysBackup' AND action = 'create' AND method = 'SCHEDULE'`).all();
    expect(ops).toEqual(Array(3).fill({ method: 'SCHEDULE', status: 200, operator_id: null }));
  });
});

describe('Workers', () => {
  test('without the archives port every sysBackup operation answers 501 pointing to D1 Time Travel', async () => {
    const w = await makeTestApp();
    const token = await w.login();
    for (const [method, path, body] of [
      ['POST', '/app/sysBackup/page', {}],
      ['POST', '/app/sysBackup/create', undefined],
      ['GET', '/app/sysBackup/download?id=1', undefined],
      ['POST', '/app/sysBackup/delete', { ids: [1] }],
    ] as const) {
      const r = await w.call(method, path, { token, body });
      expect(r.status).toBe(501);
      expect(r.json.msg).toContain('D1 Time Travel');
    }
    expect(w.count('backups')).toBe(0);
  });
});
