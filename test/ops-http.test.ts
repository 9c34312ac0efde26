import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classifyServerError } from '../src/adapters/server/storage.ts';
import { createLifecycle } from '../src/core/readiness.ts';
import { installShutdown } from '../src/entry/shutdown.ts';
import { jsonLogger } from '../src/core/log.ts';
import { makeTestApp } from './support/app.ts';
import { multipart, upload } from './support/files.ts';

/*
 * Readiness (/health/ready), 503 for a database busy beyond its wait, 507 for full storage: through
 * HTTP on the app, with the server adapters' error classification.
 */

const dir = mkdtempSync(join(tmpdir(), 'ops-http-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;

const writable = { checkWritable: async () => undefined, freeBytes: async () => 10_000 * MiB };

describe('GET /health/ready', () => {
  test('200 when ready; 503 + Retry-After while starting, stopping, with storage unwritable, below the free-space floor, or the database gone', async () => {
    const t = await makeTestApp({ env: { MIN_FREE_MB: '100' } });
    const lifecycle = createLifecycle('starting');
    t.deps.lifecycle = lifecycle;
    t.deps.storage = { ...writable };
    const ready = async () => {
      t.clock.advance(2000); // past the probe's one-second cache
      const r = await t.call('GET', '/health/ready');
      return { status: r.status, msg: r.json.msg, retryAfter: r.res.headers.get('retry-after') };
    };
    expect(await ready()).toEqual({ status: 503, msg: 'Not ready: starting', retryAfter: '5' });
    lifecycle.state = 'ready';
    expect((await ready()).status).toBe(200);
    expect((await t.call('GET', '/health/ready')).json.data).toEqual({ ok: true });

    t.deps.storage = { ...writable, checkWritable: async () => Promise.reject(Object.assign(new Error('EROFS'), { code: 'EROFS' })) };
    expect(await ready()).toMatchObject({ status: 503, msg: 'Not ready: file storage is not writable', retryAfter: '5' });
    t.deps.storage = { ...writable, freeBytes: async () => 99 * MiB };
    expect(await ready()).toMatchObject({ status: 503, msg: 'Not ready: free disk space is below MIN_FREE_MB (100)' });
    t.deps.storage = { ...writable };
    expect((await ready()).status).toBe(200);

    // Liveness stays 200 whatever readiness says.
    lifecycle.state = 'stopping';
    expect(await ready()).toMatchObject({ status: 503, msg: 'Not ready: shutting down' });
    expect((await t.call('GET', '/health')).status).toBe(200);
    lifecycle.state = 'ready';

    t.sqlite.close();
    expect(await ready()).toMatchObject({ status: 503, msg: 'Not ready: the database does not answer' });
  });

  test('after SIGTERM, while requests drain, readiness answers 503 from the first moment (not only once the drain is over)', async () => {
    // The signal handler of the real server, with a drain that lasts until released: the process's
    // own listener closes on a real SIGTERM (a probe then sees a refused connection, which cannot
    // tell 200 from 503), so the answer a balancer would get is asked of the app itself.
    const t = await makeTestApp();
    const lifecycle = createLifecycle('ready');
    t.deps.lifecycle = lifecycle;
    let release!: () => void;
    const draining = new Promise<void>((r) => (release = r));
    const exits: number[] = [];
    const shutdown = installShutdown({ lifecycle, stopServer: () => draining, finish: () => undefined, timeoutMs: 60_000, log: jsonLogger('error', () => undefined), exit: (code) => void exits.push(code) });
    try {
      expect((await t.call('GET', '/health/ready')).status).toBe(200);
      const done = shutdown.shutdown('SIGTERM');
      t.clock.advance(2000); // past the probe's one-second cache
      const probe = await t.call('GET', '/health/ready');
      expect([probe.status, probe.json.msg, probe.res.headers.get('retry-after')]).toEqual([503, 'Not ready: shutting down', '5']);
      expect(exits).toEqual([]); // still draining
      release();
      await done;
      expect(exits).toEqual([0]);
    } finally {
      shutdown.uninstall();
    }
  });

  test('while stopping, a new request on a kept-alive connection gets 503 + Retry-After and changes nothing', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    t.deps.lifecycle = createLifecycle('stopping');
    const before = t.count('users');
    const r = await t.call('POST', '/app/sysUser/add', { token, body: { loginName: 'late', nickName: 'Late', password: 'Late-Comer-2026' } });
    expect(r.status).toBe(503);
    expect(r.json.status).toBe(503);
    expect(r.res.headers.get('retry-after')).toBe('5');
    expect(r.res.headers.get('connection')).toBe('close');
    expect(t.count('users')).toBe(before);
  });
});

describe('503: the database busy beyond its wait', () => {
  test('a write while another connection holds the write lock → 503 + Retry-After, nothing written; reads keep working', async () => {
    const path = join(dir, 'busy.db');
    const t = await makeTestApp({ databasePath: path, env: { SQLITE_BUSY_TIMEOUT_MS: '50' } });
    const token = await t.login();
    const before = t.count('users');
    const other = new Database(path);
    other.run('BEGIN IMMEDIATE');
    try {
      const r = await t.call('POST', '/app/sysUser/add', { token, body: { loginName: 'busy1', nickName: 'Busy', password: 'Busy-Database-2026' } });
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ status: 503, msg: 'The database is busy, try again shortly', data: null });
      expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await t.call('POST', '/app/sysUser/page', { token, body: {} })).status).toBe(200);
    } finally {
      other.run('ROLLBACK');
      other.close();
    }
    expect(t.count('users')).toBe(before);
    const again = await t.call('POST', '/app/sysUser/add', { token, body: { loginName: 'busy1', nickName: 'Busy', password: 'Busy-Database-2026' } });
    expect(again.status).toBe(200);
  });
});

describe('507: storage full', () => {
  test('a database at its size limit refuses a write whole (507); reads keep working', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const big = 'x'.repeat(255);
    // Cap the file at its current size and fill the last page of the users table, so the next
    // user row needs a page the database may not grow.
    const pages = (t.sqlite.query('PRAGMA page_count').get() as { page_count: number }).page_count;
    t.sqlite.run(`PRAGMA max_page_count = ${pages + 2}`);
    const insert = t.sqlite.query(
      `INSERT INTO users (login_name, password_hash, nick_name, status, remark, created_at, updated_at) VALUES (?, 'x', ?, 'enabled', ?, '2026-01-01', '2026-01-01')`,
    );
    for (let i = 0; ; i++) {
      try {
        insert.run(`filler${i}`, big.slice(0, 60), big);
      } catch (e) {
        expect(classifyServerError(e)).toBe('full');
        break;
      }
    }
    const users = t.count('users');
    const opLogs = (t.sqlite.query('SELECT coalesce(max(id), 0) AS m FROM op_log').get() as { m: number }).m;
    const r = await t.call('POST', '/app/sysUser/add', { token, body: { loginName: 'full1', nickName: big.slice(0, 60), password: 'Disk-Is-Full-2026', remark: big } });
    expect(r.status).toBe(507);
    expect(r.json).toMatchObject({ status: 507, msg: 'Storage is full: the change was not saved', data: null });
    expect(t.count('users')).toBe(users);
    // The op-log row of the refused write is written if it still fits, and says 507.
    expect(t.sqlite.query('SELECT status FROM op_log WHERE id > ?').all(opLogs)).toEqual(t.count('op_log') > opLogs ? [{ status: 507 }] : []);
    const page = await t.call('POST', '/app/sysUser/page', { token, body: { params: { loginName: 'filler1' } } });
    expect(page.status).toBe(200);
    expect(page.data.total).toBeGreaterThan(0);
  });

  test('an upload that hits ENOSPC while streaming → 507, no record, no blob', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const store = t.deps.blobs!;
    t.deps.blobs = { ...store, stage: async () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 })) };
    const r = await upload(t, 'sysFile', token, { filename: 'a.txt', data: 'no room' });
    expect(r.status).toBe(507);
    expect(t.count('files')).toBe(0);
    expect(t.count('blobs')).toBe(0);
  });

  test('an upload is refused with 507 before its body is read when it would leave less than MIN_FREE_MB', async () => {
    const t = await makeTestApp({ env: { MIN_FREE_MB: '100' } });
    const token = await t.login();
    t.deps.storage = { ...writable, freeBytes: async () => 101 * MiB };
    const { body, contentType } = multipart([{ filename: 'big.bin', data: new Uint8Array(2 * MiB) }]);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(body);
        c.close();
      },
    });
    const res = await t.app.request('/app/sysFile/upload', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, 'content-length': String(body.byteLength) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(507);
    expect(pulled).toBeLessThanOrEqual(1); // at most the runtime's first read-ahead, never parsed or stored
    expect(t.count('files')).toBe(0);
    // A small upload that leaves enough room still goes through.
    expect((await upload(t, 'sysFile', token, { filename: 'small.txt', data: 'fits' })).status).toBe(200);
  });
});
