import { describe, expect, test } from 'bun:test';
import type { BlobStore } from '../src/core/ports.ts';
import { cleanup } from '../src/modules/maintenance/cleanup.ts';
import { D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp, type Runtime } from './support/app.ts';
import { get, sha256Hex, upload } from './support/files.ts';

/*
 * The sweep and an upload of identical content at the same instant, as two Workers isolates meet
 * (contract: deferred blob removal — "an upload racing a delete of identical content never loses
 * its blob"). The sweep runs with its own BlobStore object, so the in-process per-key lock
 * (withBlobLock, keyed by store) does not order the two: only what the database does can. Each
 * test stops one side between its statements with a hook and lets the other run into that gap.
 */

const HOUR = 3_600_000;
const enc = new TextEncoder();
const WAIT_LINE = 'upload waits for the blob sweep';

function later() {
  let open!: () => void;
  const opened = new Promise<void>((ok) => (open = ok));
  return { open, opened };
}

/** An app whose file was uploaded and deleted more than the grace period ago: its blob is due. */
async function dueBlob(runtime: Runtime) {
  const waited = later();
  // The logger's sink: resolves when the upload logs that it waits for the sweep.
  const logLines: string[] = [];
  const push = logLines.push.bind(logLines);
  logLines.push = (...lines: string[]) => {
    if (lines.some((l) => l.includes(WAIT_LINE))) waited.open();
    return push(...lines);
  };
  const t = await makeTestApp({ runtime, logLines });
  const token = await t.login();
  const data = enc.encode(`contended content on ${runtime}`);
  const sha = await sha256Hex(data);
  const first = (await upload(t, 'sysFile', token, { filename: 'c.txt', data })).data;
  expect((await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [first.id] } })).status).toBe(200);
  t.clock.advance(25 * HOUR);
  return { t, token, data, sha, store: t.deps.blobs!, waited: waited.opened };
}

/** The upload's file downloads with its bytes and its blob row counts it once. */
async function expectIntact(t: AnyTestApp, token: string, id: number, data: Uint8Array, sha: string) {
  const res = await get(t, `/app/sysFile/download?id=${id}`, token);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe(new TextDecoder().decode(data));
  expect(await t.row('SELECT ref_count, removing_at FROM blobs WHERE sha256 = ?', sha)).toEqual({ ref_count: 1, removing_at: null });
}

for (const runtime of RUNTIMES) {
  describe(`${runtime}: sweep and upload of the same content at the same instant, no shared lock`, () => {
    test('the sweep has taken the row and stands before deleting the bytes when the upload arrives', async () => {
      const { t, token, data, sha, store, waited } = await dueBlob(runtime);
      const atDelete = later();
      const release = later();
      const sweepStore: BlobStore = { ...store, deleteMany: async (keys) => (atDelete.open(), await release.opened, store.deleteMany(keys)) };
      const sweeping = cleanup({ ...t.deps, blobs: sweepStore });
      await atDelete.opened;
      // The upload runs into the sweep's gap: it must not reference the row being removed.
      const uploading = upload(t, 'sysFile', token, { filename: 'c.txt', data });
      const first = await Promise.race([waited.then(() => 'waited'), uploading.then(() => 'finished')]);
      release.open();
      expect((await sweeping).blobsUnreferenced).toBe(1);
      const second = await uploading;
      expect(second.status).toBe(200);
      await expectIntact(t, token, second.data.id, data, sha);
      // And it was the database that ordered them: the upload met the sweep's claim and waited.
      expect(first).toBe('waited');
    }, D1_START_MS + 30_000);

    test('the upload has written the bytes and stands before recording its file when the sweep runs', async () => {
      const { t, token, data, sha, store } = await dueBlob(runtime);
      const atRecord = later();
      const release = later();
      t.deps.blobs = {
        ...store,
        stage: async (body, hint) => {
          const staged = await store.stage(body, hint);
          return { ...staged, commit: async (key) => (await staged.commit(key), atRecord.open(), await release.opened) };
        },
      };
      const uploading = upload(t, 'sysFile', token, { filename: 'c.txt', data });
      await atRecord.opened;
      // A whole sweep run in the upload's gap, in another isolate: it must leave row and bytes.
      const swept = await cleanup({ ...t.deps, blobs: { ...store } });
      expect(swept.blobsUnreferenced).toBe(0);
      release.open();
      const second = await uploading;
      expect(second.status).toBe(200);
      await expectIntact(t, token, second.data.id, data, sha);
      // Once the file goes too, the next sweep after the grace period removes row and bytes.
      expect((await t.call('POST', '/app/sysFile/delete', { token, body: { ids: [second.data.id] } })).status).toBe(200);
      t.clock.advance(25 * HOUR);
      expect((await cleanup(t.deps)).blobsUnreferenced).toBe(1);
      expect(await t.row('SELECT count(*) AS n FROM blobs WHERE sha256 = ?', sha)).toEqual({ n: 0 });
      expect(await store.head(sha)).toBeNull();
    }, D1_START_MS + 30_000);

    test('a sweep that never comes back: the upload gives up with 503 and nothing written; the next sweep finishes', async () => {
      const { t, token, data, sha, store } = await dueBlob(runtime);
      const atDelete = later();
      const stuck: BlobStore = { ...store, deleteMany: async () => (atDelete.open(), await new Promise<void>(() => {})) };
      void cleanup({ ...t.deps, blobs: stuck });
      await atDelete.opened;
      const files = await t.count('files');
      const refused = await upload(t, 'sysFile', token, { filename: 'c.txt', data });
      expect(refused.status).toBe(503);
      expect(refused.res.headers.get('retry-after')).toBeTruthy();
      expect(await t.count('files')).toBe(files);
      // An hour later the claim is stale: the next sweep takes it over and removes row and bytes.
      t.clock.advance(2 * HOUR);
      expect((await cleanup(t.deps)).blobsUnreferenced).toBe(1);
      expect(await store.head(sha)).toBeNull();
      const again = await upload(t, 'sysFile', token, { filename: 'c.txt', data });
      expect(again.status).toBe(200);
      await expectIntact(t, token, again.data.id, data, sha);
    }, D1_START_MS + 30_000);
  });
}
