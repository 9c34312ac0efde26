import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup } from '../src/modules/maintenance/cleanup.ts';
import { makeTestApp, type TestApp } from './support/app.ts';
import { get, sha256Hex, sweepAfterGrace, upload } from './support/files.ts';
import { png } from './support/images.ts';

/*
 * Deferred blob removal (contract: "File content is removed only by a periodic sweep, some time
 * after the last record referencing it went"). Deletes only mark a blob; the sweep removes it after
 * BLOB_GRACE_HOURS; an upload of the same bytes in between revives it.
 */

const enc = new TextEncoder();
const HOUR = 3_600_000;
const blobPath = (t: TestApp, sha: string) => join(t.filesDir, sha.slice(0, 2), sha.slice(2, 4), sha);
const blobRow = (t: TestApp, sha: string) =>
  t.sqlite.query('SELECT ref_count, unreferenced_at FROM blobs WHERE sha256 = ?').get(sha) as { ref_count: number; unreferenced_at: string | null } | null;

/** Records every call to the store's delete. */
function spyDeletes(t: TestApp) {
  const calls: string[] = [];
  const store = t.deps.blobs!;
  t.deps.blobs = { ...store, delete: async (key) => (calls.push(key), store.delete(key)) };
  return calls;
}

describe('deletes never remove content inline', () => {
  test('file and image deletes mark the blob (ref_count 0, unreferenced_at) and leave the bytes', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const deletes = spyDeletes(t);
    const file = (await upload(t, 'sysFile', token, { filename: 'a.txt', type: 'text/plain', data: 'file bytes' })).data;
    const image = (await upload(t, 'sysImage', token, { filename: 'a.png', type: 'image/png', data: png(3, 2) })).data;
    expect((await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [file.id] } })).status).toBe(200);
    expect((await t.call('POST', '/app/sysImage/delete', { token, body: { ids: [image.id] } })).status).toBe(200);
    expect(deletes).toEqual([]);
    for (const sha of [file.sha256, image.sha256]) {
      expect(blobRow(t, sha)).toEqual({ ref_count: 0, unreferenced_at: new Date(t.clock.now()).toISOString() });
      expect(existsSync(blobPath(t, sha))).toBe(true);
    }
    // The records themselves are gone at once.
    expect((await get(t, `/app/sysFile/download?id=${file.id}`, token)).status).toBe(404);
    expect((await get(t, `/app/sysImage/preview?id=${image.id}`, token)).status).toBe(404);
  });
});

describe('the sweep', () => {
  test('rows it may not claim (reserved by an upload within the hour, claimed by a live sweep) do not fill its batch', async () => {
    // A hundred such rows, due and oldest, once filled the due select (LIMIT 100) on every run: a
    // deleted file's content was then never removed (found by review: refused uploads leave their
    // reservation row, and a caller can refresh it).
    const t = await makeTestApp();
    const token = await t.login();
    const old = new Date(t.clock.now() - 48 * HOUR).toISOString();
    const now = new Date(t.clock.now()).toISOString();
    const junk = t.sqlite.prepare('INSERT INTO blobs (sha256, size, ref_count, created_at, unreferenced_at, reserved_at, removing_at) VALUES (?, 1, 0, ?, ?, ?, ?)');
    for (let i = 0; i < 100; i++) {
      const sha = await sha256Hex(enc.encode(`junk ${i}`));
      junk.run(sha, old, old, i % 2 ? now : null, i % 2 ? null : `${now} claim-${i}`);
    }
    const victim = (await upload(t, 'sysFile', token, { filename: 'v.txt', data: 'deleted content' })).data;
    expect((await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [victim.id] } })).status).toBe(200);
    t.clock.advance(25 * HOUR);
    // Still within the hour for the sweep: the reservations and claims are renewed as of now.
    t.sqlite.run('UPDATE blobs SET reserved_at = ? WHERE size = 1 AND reserved_at IS NOT NULL', [new Date(t.clock.now()).toISOString()]);
    t.sqlite.run("UPDATE blobs SET removing_at = ? || ' live' WHERE size = 1 AND removing_at IS NOT NULL", [new Date(t.clock.now()).toISOString()]);
    expect(await cleanup(t.deps)).toMatchObject({ blobsUnreferenced: 1 });
    expect(blobRow(t, victim.sha256)).toBeNull();
    expect(existsSync(blobPath(t, victim.sha256))).toBe(false);
    expect((t.sqlite.query('SELECT count(*) AS n FROM blobs WHERE size = 1').get() as { n: number }).n).toBe(100);
  });

  test('keeps unreferenced content through the grace period, removes row and bytes after it', async () => {
    const t = await makeTestApp({ env: { BLOB_GRACE_HOURS: '2' } });
    const token = await t.login();
    const up = (await upload(t, 'sysFile', token, { filename: 'g.txt', data: 'graceful' })).data;
    await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [up.id] } });
    t.clock.advance(2 * HOUR - 60_000);
    expect(await cleanup(t.deps)).toMatchObject({ blobsUnreferenced: 0 });
    expect(blobRow(t, up.sha256)?.ref_count).toBe(0);
    expect(existsSync(blobPath(t, up.sha256))).toBe(true);
    t.clock.advance(2 * 60_000);
    expect(await cleanup(t.deps)).toMatchObject({ blobsUnreferenced: 1 });
    expect(blobRow(t, up.sha256)).toBeNull();
    expect(existsSync(blobPath(t, up.sha256))).toBe(false);
  });

  test('an upload of the same bytes after the delete revives the blob; the sweep leaves it', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const first = (await upload(t, 'sysFile', token, { filename: 'r.txt', data: 'revived' })).data;
    await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [first.id] } });
    t.clock.advance(HOUR);
    const second = (await upload(t, 'sysFile', token, { filename: 'r.txt', data: 'revived' })).data;
    expect(blobRow(t, second.sha256)).toEqual({ ref_count: 1, unreferenced_at: null });
    await sweepAfterGrace(t);
    const res = await get(t, `/app/sysFile/download?id=${second.id}`, token);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('revived');
  });

  test('the due blobs of a run go in one store call (multi-key delete), none one by one', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await upload(t, 'sysFile', token, { filename: `m${i}.txt`, data: enc.encode(`many ${i}`) })).data.id);
    expect((await t.call('POST', '/app/sysFile/delete', { token, body: { ids } })).status).toBe(200);
    const store = t.deps.blobs!;
    const calls: string[][] = [];
    t.deps.blobs = {
      ...store,
      delete: async (key) => (calls.push([key]), store.delete(key)),
      deleteMany: async (keys) => (calls.push([...keys]), store.deleteMany(keys)),
    };
    const result = await sweepAfterGrace(t);
    expect(result.blobsUnreferenced).toBe(12);
    expect(calls.map((c) => c.length)).toEqual([12]);
    expect(t.count('blobs')).toBe(0);
  });

  test('an upload racing the sweep of identical content never loses its blob', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const data = enc.encode('contended content');
    const sha = await sha256Hex(data);
    const first = (await upload(t, 'sysFile', token, { filename: 'c.txt', data })).data;
    await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [first.id] } });
    // Slow the sweep's content removal so the upload arrives between "row gone" and "bytes gone".
    const store = t.deps.blobs!;
    let removing!: () => void;
    const removingStarted = new Promise<void>((r) => (removing = r));
    t.deps.blobs = { ...store, deleteMany: async (keys) => (removing(), await Bun.sleep(50), store.deleteMany(keys)) };
    t.clock.advance(25 * HOUR);
    const sweeping = cleanup(t.deps);
    await removingStarted;
    const second = await upload(t, 'sysFile', token, { filename: 'c.txt', data });
    expect((await sweeping).blobsUnreferenced).toBe(1);
    expect(second.status).toBe(200);
    expect(blobRow(t, sha)?.ref_count).toBe(1);
    const res = await get(t, `/app/sysFile/download?id=${second.data.id}`, token);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('contended content');
  });

  test('an upload racing the delete of identical content keeps its blob through any number of sweeps', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const data = enc.encode('delete race');
    const first = (await upload(t, 'sysFile', token, { filename: 'd.txt', data })).data;
    const [del, second] = await Promise.all([
      t.call('POST', '/app/sysFile/delete', { token, body: { ids: [first.id] } }),
      upload(t, 'sysFile', token, { filename: 'd.txt', data }),
    ]);
    expect(del.status).toBe(200);
    expect(second.status).toBe(200);
    expect(blobRow(t, first.sha256)?.ref_count).toBe(1);
    await sweepAfterGrace(t);
    expect(await (await get(t, `/app/sysFile/download?id=${second.data.id}`, token)).text()).toBe('delete race');
  });

  test('a database snapshot taken before a delete still finds every blob it references while the grace period lasts', async () => {
    const t = await makeTestApp();
    const token = await t.login();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await upload(t, 'sysFile', token, { filename: `s${i}.txt`, data: `snapshot ${i}` })).data.id);
    const snapshot = Database.deserialize(t.sqlite.serialize());
    await t.call('POST', '/app/sysFile/delete', { token, body: { ids } });
    t.clock.advance(23 * HOUR);
    await cleanup(t.deps);
    const referenced = snapshot.query('SELECT DISTINCT sha256 FROM files').all() as { sha256: string }[];
    expect(referenced).toHaveLength(5);
    for (const { sha256 } of referenced) expect(existsSync(blobPath(t, sha256))).toBe(true);
  });
});
