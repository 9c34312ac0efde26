import { beforeAll, describe, expect, test } from 'bun:test';
import { diskBlobStore } from '../src/adapters/server/disk-blobs.ts';
import { r2BlobStore } from '../src/adapters/workers/r2-blobs.ts';
import { beforeBatch as beforeBatchOf, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { FakeBucket, installFixedLengthStream } from './support/fake-r2.ts';
import { chunkedStream, filesUnder, multipart, randomBytes, upload } from './support/files.ts';
import { UNCHECKED_UPLOAD_BYTES } from '../src/modules/files/files.service.ts';
import { scratchDir } from './support/tmp-root.ts';
import { USER_PASSWORD, menuIdsFor, userWithCodes, type FixtureUser } from './support/rbac.ts';

// Uploads judge the caller late (src/db/runner.ts, WritePlan.anyCaller): the auth statement travels with the
// content reservation, the upload's first database call, which comes AFTER the body was read. So a
// blob store checks the caller (StageHint.beforeWrite) before it writes anything outside memory: a
// temporary file on disk, an R2 part of a body over 5 MiB. A caller refused there has stored
// nothing anywhere; one refused later (a race) by the guards of the record batch has recorded nothing.

const ENDED = 'Session has ended, please log in again';
const SMALL = 2 * 1024;
const LARGE = 6 * 1024 * 1024; // over one R2 part: the first 5 MiB go out before the reservation
const sessionOf = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;

beforeAll(installFixedLengthStream);

describe('blob stores check the caller before their first write', () => {
  const refuse = () => Promise.reject(new Error('refused'));

  test('disk: a refusal creates no temporary file and reads none of the body', async () => {
    const dir = scratchDir('files');
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({ pull: (c) => void (pulled++, c.enqueue(new Uint8Array(10)), pulled > 3 && c.close()) });
    await expect(diskBlobStore(dir).stage(body, { beforeWrite: refuse })).rejects.toThrow('refused');
    expect(filesUnder(dir)).toEqual([]);
    // A ReadableStream pulls once to fill its queue when it is made; nothing after that.
    expect(pulled).toBeLessThanOrEqual(1);
  });

  test('R2: a body under one part waits in memory; the first part only goes out after the check', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    let checks = 0;
    const counted = async () => void checks++;
    const small = await store.stage(chunkedStream(randomBytes(SMALL), 512), { beforeWrite: counted });
    expect([checks, bucket.partSizes.length, bucket.objects.size]).toEqual([0, 0, 0]);
    await small.discard();
    await expect(store.stage(chunkedStream(randomBytes(LARGE), 64 * 1024), { beforeWrite: refuse })).rejects.toThrow('refused');
    await expect(store.stage(chunkedStream(randomBytes(LARGE), 64 * 1024), { atLeast: LARGE - 70_000, beforeWrite: refuse })).rejects.toThrow('refused');
    expect([bucket.partSizes.length, bucket.objects.size]).toEqual([0, 0]);
    const large = await store.stage(chunkedStream(randomBytes(LARGE), 64 * 1024), { beforeWrite: counted });
    expect([checks, bucket.partSizes.length]).toEqual([1, 2]);
    await large.discard();
  });
});

for (const runtime of RUNTIMES) {
  for (const kind of ['disk', 'r2'] as const) {
    describe(`${runtime}, blobs on ${kind}`, () => {
      let t: AnyTestApp;
      let caller: FixtureUser;
      let nobody: FixtureUser;
      const bucket = new FakeBucket();
      const dir = scratchDir('files');
      beforeAll(async () => {
        t = await makeTestApp({ runtime, blobs: kind === 'disk' ? diskBlobStore(dir) : r2BlobStore(bucket) });
        caller = await userWithCodes(t, ['sys:file:upload', 'sys:file:download'], `up_${runtime}_${kind}`);
        nobody = await userWithCodes(t, ['sys:file:page'], `up_nobody_${runtime}_${kind}`);
      }, D1_START_MS);

      /** Everything an upload could leave behind: rows and stored bytes (temporary ones included). */
      const state = async () => ({
        files: await t.rows('SELECT id FROM files ORDER BY id'),
        blobs: await t.rows('SELECT sha256, ref_count FROM blobs ORDER BY sha256'),
        stored: kind === 'disk' ? filesUnder(dir) : [...bucket.objects.keys()].sort(),
        parts: bucket.partSizes.length,
      });
      const opRows = (traceId: string) => t.rows('SELECT status, operator_name FROM op_log WHERE trace_id = ?', traceId);
      const send = (token: string, size: number) => upload(t, 'sysFile', token, { filename: `f${size}.bin`, data: randomBytes(size) });
      const traceOf = (r: Awaited<ReturnType<typeof send>>) => r.res.headers.get('x-trace-id')!;

      const beforeBatch = (nth: number, sql: string, ...params: (string | number)[]) => beforeBatchOf(t, nth, sql, ...params);

      test('refused up front: an ended session 401 without a row, no upload code 403 with a row; nothing stored', async () => {
        const ended = await t.login(caller.loginName, USER_PASSWORD);
        await t.exec('UPDATE sessions SET revoked_at = ? WHERE id = ?', new Date(t.clock.now()).toISOString(), sessionOf(ended));
        for (const size of [SMALL, LARGE]) {
          const was = await state();
          const r = await send(ended, size);
          expect([size, r.status, r.json.msg]).toEqual([size, 401, ENDED]);
          expect(await state()).toEqual(was);
          expect(await opRows(traceOf(r))).toEqual([]);
          const no = await send(nobody.token, size);
          expect([size, no.status, no.json.msg]).toEqual([size, 403, 'Insufficient permission']);
          expect(await state()).toEqual(was);
          expect(await opRows(traceOf(no))).toEqual([{ status: 403, operator_name: nobody.loginName }]);
        }
      });

      /** A multipart body sent chunked from a stream that counts what the server read. */
      async function sendCounted(token: string, parts: Parameters<typeof multipart>[0]) {
        const { body, contentType } = multipart(parts);
        let read = 0;
        const chunks = chunkedStream(body, 64 * 1024).getReader();
        const counted = new ReadableStream<Uint8Array>({
          async pull(c) {
            const r = await chunks.read();
            if (r.done) return c.close();
            read += r.value.byteLength;
            c.enqueue(r.value);
          },
        });
        const res = await t.request('/app/sysFile/upload', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
          body: counted,
          duplex: 'half',
        } as RequestInit);
        return { status: res.status, read };
      }
      /** Read before the refusal at most: the bound, plus the chunks in flight through the parser's pipes. */
      const MOST_READ = UNCHECKED_UPLOAD_BYTES + 4 * 64 * 1024;

      test('an unchecked caller is refused before more than UNCHECKED_UPLOAD_BYTES of the body are read', async () => {
        const was = await state();
        const r = await sendCounted(nobody.token, [{ filename: 'big.bin', data: randomBytes(3 * 1024 * 1024) }]);
        expect(r.status).toBe(403);
        expect(await state()).toEqual(was);
        // Disk: checked before the temporary file, i.e. at once. R2: after at most the bound (a body
        // under it waits in memory).
        expect(r.read).toBeLessThanOrEqual(kind === 'disk' ? 4 * 64 * 1024 : MOST_READ);
      });

      test('decoy parts before the file part count too: the bound is on the whole body (found by review)', async () => {
        const was = await state();
        const decoy = { name: 'decoy', filename: 'x.bin', data: randomBytes(8 * 1024 * 1024) };
        const r = await sendCounted(nobody.token, [decoy, { filename: 'small.bin', data: randomBytes(1024) }]);
        expect([r.status, r.read <= MOST_READ]).toEqual([403, true]);
        const ended = await t.login(caller.loginName, USER_PASSWORD);
        await t.exec('UPDATE sessions SET revoked_at = ? WHERE id = ?', new Date(t.clock.now()).toISOString(), sessionOf(ended));
        const none = await sendCounted(ended, [decoy]);
        expect([none.status, none.read <= MOST_READ]).toEqual([401, true]);
        expect(await state()).toEqual(was);
      });

      test('a session revoked or the code removed before the record batch: 401/403, no record, the refusal logged', async () => {
        const [menuId] = await menuIdsFor(t, ['sys:file:upload']);
        for (const size of [SMALL, LARGE]) {
          const token = await t.login(caller.loginName, USER_PASSWORD);
          const files = await t.rows('SELECT id FROM files');
          // Batch 1 reserves the content (with the auth statement, or after it for a large body); batch 2 records.
          let undo = beforeBatch(2, 'UPDATE sessions SET revoked_at = ? WHERE id = ?', new Date(t.clock.now()).toISOString(), sessionOf(token));
          const r = await send(token, size);
          undo();
          expect([size, r.status, r.json.msg]).toEqual([size, 401, ENDED]);
          expect(await t.rows('SELECT id FROM files')).toEqual(files);
          expect(await opRows(traceOf(r))).toEqual([{ status: 401, operator_name: caller.loginName }]);

          const live = await t.login(caller.loginName, USER_PASSWORD);
          undo = beforeBatch(2, 'DELETE FROM role_menu WHERE role_id = ? AND menu_id = ?', caller.roleId, menuId!);
          const f = await send(live, size);
          undo();
          await t.exec('INSERT INTO role_menu (role_id, menu_id) VALUES (?, ?)', caller.roleId, menuId!);
          expect([size, f.status, f.json.msg]).toEqual([size, 403, 'Insufficient permission']);
          expect(await t.rows('SELECT id FROM files')).toEqual(files);
          expect(await opRows(traceOf(f))).toEqual([{ status: 403, operator_name: caller.loginName }]);

          // Without the race the same upload goes through, with its link (the caller holds the code).
          const ok = await send(live, size);
          expect([size, ok.status, ok.data.size]).toEqual([size, 200, size]);
          expect(ok.data.url).toStartWith('/app/sysFile/download?id=');
        }
      });
    });
  }
}
