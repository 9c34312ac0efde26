import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync, writeSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { explainStartupError } from '../src/entry/startup-errors.ts';
import { chunkedStream, multipart } from './support/files.ts';
import { runEntry, startServer, stopServer } from './support/server-process.ts';

/*
 * The real server process (`bun src/entry/bun.ts`): start-up failures are one line with exit 78,
 * start-up clears interrupted uploads, and SIGTERM drains requests in flight before exiting 0.
 */

const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
/** An install's folder (made: outside ./data the server creates none but the last part of a path). */
const paths = (name: string) => {
  mkdirSync(join(dir, name), { recursive: true });
  return { DATABASE_PATH: join(dir, name, 'admin.db'), FILES_DIR: join(dir, name, 'files') };
};
const PASSWORD = 'Lifecycle-Pass-2026';

/** A migrated database file with `rows` op-log rows (several pages) and nothing else open on it. */
function migratedDatabase(name: string, rows = 0) {
  const p = paths(name);
  mkdirSync(join(dir, name), { recursive: true });
  const db = new Database(p.DATABASE_PATH, { create: true });
  migrate(db);
  const insert = db.query(
    `INSERT INTO op_log (module, action, method, path, ip, user_agent, params, status, trace_id, created_at) VALUES ('m', 'a', 'POST', '/p', '1.2.3.4', 'ua', ?, 200, 't', '2026-01-01')`,
  );
  db.transaction(() => {
    for (let i = 0; i < rows; i++) insert.run('p'.repeat(200) + i);
  })();
  db.close();
  return p;
}

describe('start-up failures: one line naming the variable, the cause and the fix; exit 78', () => {
  test('a file that is not a database', () => {
    const p = paths('garbage');
    mkdirSync(join(dir, 'garbage'), { recursive: true });
    writeFileSync(p.DATABASE_PATH, 'this is not a database, just text that is long enough to have a header '.repeat(20));
    const r = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD });
    expect(r.status).toBe(78);
    expect(r.lines).toEqual([`DATABASE_PATH=${p.DATABASE_PATH} is not a SQLite database (or its header is damaged): restore it from a backup (npm run restore -- <archive>) or set DATABASE_PATH to another file`]);
  }, 30_000);

  test('a corrupt page is caught by the start-up quick_check; LOG_LEVEL=debug adds the stack', () => {
    const p = migratedDatabase('corrupt', 2000);
    const fd = openSync(p.DATABASE_PATH, 'r+');
    const size = statSync(p.DATABASE_PATH).size;
    // Overwrite a page in the middle of the op_log table (not the header, not the schema page).
    writeSync(fd, new Uint8Array(4096).fill(0x5a), 0, 4096, Math.floor(size / 4096 / 2) * 4096);
    closeSync(fd);
    const r = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD });
    expect(r.status).toBe(78);
    expect(r.lines, r.stderr).toHaveLength(1);
    // quick_check either lists the damage or stops at it with SQLITE_CORRUPT.
    expect(r.lines[0]).toMatch(new RegExp(`^DATABASE_PATH=${p.DATABASE_PATH} (failed its quick_check|is corrupt) \\(`));
    expect(r.lines[0]).toContain('restore it from a backup (npm run restore -- <archive>)');
    const debug = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'debug' });
    expect(debug.status).toBe(78);
    expect(debug.lines[0]).toBe(r.lines[0]!);
    expect(debug.lines.length).toBeGreaterThan(1);
    expect(debug.stderr).toContain('    at ');
  }, 30_000);

  test('above STARTUP_CHECK_MAX_MB the quick check skips the two logs (start-up bounded) and still refuses a damaged users table', async () => {
    const p = migratedDatabase('bounded', 6000);
    expect(statSync(p.DATABASE_PATH).size).toBeGreaterThan(2 ** 20);
    const db = new Database(p.DATABASE_PATH, { readonly: true });
    const pageSize = (db.query('PRAGMA page_size').get() as { page_size: number }).page_size;
    const usersRoot = (db.query(`SELECT rootpage FROM sqlite_master WHERE name = 'users'`).get() as { rootpage: number }).rootpage;
    db.close();
    const damage = (offset: number) => {
      const fd = openSync(p.DATABASE_PATH, 'r+');
      writeSync(fd, new Uint8Array(pageSize).fill(0x5a), 0, pageSize, offset);
      closeSync(fd);
    };
    damage(Math.floor(statSync(p.DATABASE_PATH).size / pageSize / 2) * pageSize); // an op_log page, as above
    const s = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD, STARTUP_CHECK_MAX_MB: '1' }, children);
    expect(s.output()).toContain('"msg":"database check passed","check":"quick"');
    expect(s.output()).toContain('"scope":"all but the logs"');
    expect(await stopServer(s)).toBe(0);
    damage((usersRoot - 1) * pageSize);
    const r = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD, STARTUP_CHECK_MAX_MB: '1' });
    expect(r.status).toBe(78);
    expect(r.lines[0]).toMatch(new RegExp(`^DATABASE_PATH=${p.DATABASE_PATH} (failed its quick_check|is corrupt) \\(`));
  }, 60_000);

  test('a database migrated by a newer release is refused, naming the unknown migrations', () => {
    const p = migratedDatabase('newer');
    const db = new Database(p.DATABASE_PATH);
    db.run(`INSERT INTO d1_migrations (name) VALUES ('0042_from_the_future.sql'), ('0043_also_new.sql')`);
    db.close();
    const r = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD });
    expect(r.status).toBe(78);
    expect(r.lines).toEqual([
      `DATABASE_PATH=${p.DATABASE_PATH} was migrated by a newer release (applied migrations this release does not know: 0042_from_the_future.sql, 0043_also_new.sql): run that release, or restore it from a backup (npm run restore -- <archive>) taken before the upgrade`,
    ]);
  }, 30_000);

  test('a second server on a file the first holds with SQLITE_EXCLUSIVE=true', async () => {
    const p = paths('exclusive');
    const first = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD, SQLITE_EXCLUSIVE: 'true' }, children);
    try {
      const r = runEntry({ ...p, ADMIN_PASSWORD: PASSWORD, SQLITE_EXCLUSIVE: 'true', SQLITE_BUSY_TIMEOUT_MS: '100' });
      expect(r.status).toBe(78);
      expect(r.lines).toEqual([`another process holds DATABASE_PATH=${p.DATABASE_PATH} (SQLITE_EXCLUSIVE=true): stop it or set SQLITE_EXCLUSIVE=false`]);
    } finally {
      expect(await stopServer(first)).toBe(0);
    }
  }, 30_000);

  test('a port already in use', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = runEntry({ ...paths('port'), ADMIN_PASSWORD: PASSWORD, PORT: String(port) });
      expect(r.status).toBe(78);
      expect(r.lines).toEqual([`PORT=${port} (HOST=127.0.0.1) is already in use: stop the other server or choose another port`]);
    } finally {
      blocker.close();
    }
  }, 30_000);

  test('causes a test cannot provoke as root: read-only filesystem, foreign owner, full disk', () => {
    const subject = { name: 'DATABASE_PATH', value: '/data/admin.db' };
    expect(explainStartupError(Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY', errno: 8 }), subject)).toStartWith(
      'DATABASE_PATH=/data/admin.db cannot be written',
    );
    expect(explainStartupError(Object.assign(new Error('x'), { code: 'EROFS' }), subject)).toBe(
      'DATABASE_PATH=/data/admin.db is on a read-only filesystem: mount it read-write or choose a writable path',
    );
    expect(explainStartupError(Object.assign(new Error('x'), { code: 'EACCES' }), subject)).toContain('fix the owner or permissions');
    expect(explainStartupError(Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN', errno: 14 }), subject)).toContain('cannot be opened');
    expect(explainStartupError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL', errno: 13 }), subject)).toBe(
      'the disk holding DATABASE_PATH=/data/admin.db is full: free some space and start again',
    );
    // node:sqlite reports the code as `errcode`.
    expect(explainStartupError(Object.assign(new Error('file is not a database'), { code: 'ERR_SQLITE_ERROR', errcode: 26 }), subject)).toContain('is not a SQLite database');
  });
});

describe('start-up housekeeping', () => {
  test('temporary files of uploads interrupted by a crash are removed at start', async () => {
    const p = paths('leftovers');
    const tmp = join(p.FILES_DIR, 'tmp');
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'crashed-upload'), 'half a file');
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(tmp, 'crashed-upload'), old, old);
    const s = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD }, children);
    expect(readdirSync(tmp)).toEqual([]);
    expect(s.output()).toContain('"msg":"temporary upload files cleared","count":1');
    expect(await stopServer(s)).toBe(0);
  }, 30_000);
});

describe('backups of a running server', () => {
  test('with SQLITE_EXCLUSIVE=true the service still backs itself up through its own connection', async () => {
    const p = paths('exclusive-backup');
    const s = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD, SQLITE_EXCLUSIVE: 'true', BACKUP_DIR: join(dir, 'exclusive-backup', 'backups') }, children);
    const login = await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const res = await fetch(`${s.base}/app/sysBackup/create`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const backup = ((await res.json()) as { data: { name: string; status: string } }).data;
    expect(backup.status).toBe('done');
    expect(readdirSync(join(dir, 'exclusive-backup', 'backups'))).toEqual([backup.name]);
    expect(await stopServer(s)).toBe(0);
  }, 30_000);
});

describe('graceful shutdown', () => {
  test('SIGTERM: readiness 503 / no new connections at once, the upload and logins in flight finish, WAL checkpointed, exit 0', async () => {
    const p = paths('drain');
    const s = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD }, children);
    expect((await fetch(`${s.base}/health/ready`)).status).toBe(200);
    const login = () =>
      fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) });
    const token = ((await (await login()).json()) as { data: { token: string } }).data.token;

    // An upload that takes ~1.5 s to arrive, and logins (argon2id, real cost) started with it.
    const { body, contentType } = multipart([{ filename: 'slow.bin', data: new Uint8Array(256 * 1024).fill(7) }]);
    const slow = chunkedStream(body, 16 * 1024).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({ transform: async (chunk, c) => (await Bun.sleep(90), c.enqueue(chunk)) }),
    );
    const uploading = fetch(`${s.base}/app/sysFile/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      body: slow,
      duplex: 'half',
    } as RequestInit);
    const logins = [login(), login(), login()];
    await Bun.sleep(300);
    s.p.kill('SIGTERM');
    await Bun.sleep(100);
    // New connections: refused (the listener is closed) or, if one slips in, 503 — never served.
    const probe = await fetch(`${s.base}/health/ready`).then((r) => r.status, () => 'refused');
    expect([503, 'refused']).toContain(probe);

    const up = await uploading;
    expect(up.status).toBe(200);
    const record = ((await up.json()) as { data: { id: number; size: number } }).data;
    expect(record.size).toBe(256 * 1024);
    for (const r of await Promise.all(logins)) expect(r.status).toBe(200);
    expect(await s.exited).toBe(0);
    expect(s.output()).toContain('"msg":"shutting down","signal":"SIGTERM"');
    expect(s.output()).toContain('"msg":"stopped","drained":true');

    // Everything acknowledged is in the database file itself (the WAL was folded in and removed).
    const wal = `${p.DATABASE_PATH}-wal`;
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const db = new Database(p.DATABASE_PATH, { readonly: true });
    expect(db.query('SELECT size FROM files WHERE id = ?').get(record.id)).toEqual({ size: 256 * 1024 });
    expect((db.query(`SELECT count(*) AS n FROM login_log WHERE status = 'success'`).get() as { n: number }).n).toBe(4);
    db.close();
  }, 60_000);

  test('SHUTDOWN_TIMEOUT_SECONDS bounds the drain: a request that never ends is cut, the process still exits 0', async () => {
    const p = paths('deadline');
    const s = await startServer({ ...p, ADMIN_PASSWORD: PASSWORD, SHUTDOWN_TIMEOUT_SECONDS: '1' }, children);
    const login = await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const { contentType } = multipart([{ filename: 'x', data: '' }]);
    const endless = new ReadableStream<Uint8Array>({ pull: async (c) => (await Bun.sleep(50), c.enqueue(new Uint8Array(1024))) });
    const hanging = fetch(`${s.base}/app/sysFile/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body: endless, duplex: 'half' } as RequestInit).catch(
      () => 'cut',
    );
    await Bun.sleep(300);
    const signalled = Date.now();
    s.p.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(8000);
    expect(s.output()).toContain('requests still in flight at SHUTDOWN_TIMEOUT_SECONDS are cut');
    await hanging;
  }, 30_000);
});
