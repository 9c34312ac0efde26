import { beforeAll, describe, expect, test } from 'bun:test';
import { partPlan, R2_PART_BYTES, r2BlobStore } from '../src/adapters/workers/r2-blobs.ts';
import { chunkedStream, randomBytes, sha256Hex } from './support/files.ts';
import { FakeBucket, installFixedLengthStream } from './support/fake-r2.ts';

/*
 * The R2 adapter against an in-memory stand-in of the binding (test/support/fake-r2.ts): it checks
 * the adapter's own logic (part buffering, staging, commit, discard, listing). The real binding is
 * exercised by the edge suite under wrangler.
 */

beforeAll(installFixedLengthStream);
const readAll = async (s: ReadableStream<Uint8Array> | null) => new Uint8Array(await new Response(s).arrayBuffer()) as Uint8Array;

describe('R2 blob store (in-memory binding)', () => {
  test('a small upload is put straight under its content key at commit', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const data = randomBytes(100_000);
    const key = await sha256Hex(data);
    const staged = await store.stage(chunkedStream(data, 999));
    expect(staged.size).toBe(data.byteLength);
    expect(bucket.objects.size).toBe(0);
    await staged.commit(key);
    await staged.discard();
    expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
    expect(await readAll(await store.get(key))).toEqual(data);
    expect(await readAll(await store.get(key, { offset: 10, length: 5 }))).toEqual(data.slice(10, 15));
    expect(await store.head(key)).toEqual({ size: data.byteLength });
  });

  test('a large upload goes through a multipart staging object in 5 MiB parts and is copied at commit', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const data = randomBytes(2 * R2_PART_BYTES + 12345);
    const key = await sha256Hex(data);
    const staged = await store.stage(chunkedStream(data, 65_536));
    expect(bucket.partSizes).toEqual([R2_PART_BYTES, R2_PART_BYTES, 12345]);
    await staged.commit(key);
    await staged.discard();
    expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
    expect(await readAll(await store.get(key))).toEqual(data);
  });

  test('with a size hint, the parts the stream is known to fill are streamed as they arrive, only the rest is held', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const data = randomBytes(2 * R2_PART_BYTES + 12345);
    const key = await sha256Hex(data);
    // At least 1.5 × 5 MiB: one streamed part of that size, the rest (a smaller last part) held.
    const atLeast = Math.floor(1.5 * R2_PART_BYTES);
    const staged = await store.stage(chunkedStream(data, 65_536), { atLeast });
    expect(bucket.partSizes).toEqual([atLeast, data.byteLength - atLeast]);
    expect(staged.size).toBe(data.byteLength);
    await staged.commit(key);
    await staged.discard();
    expect(await readAll(await store.get(key))).toEqual(data);
    // A file exactly as long as the hint: the streamed part is also the last one.
    const exact = randomBytes(R2_PART_BYTES);
    const s2 = await store.stage(chunkedStream(exact, 100_000), { atLeast: R2_PART_BYTES });
    await s2.commit(await sha256Hex(exact));
    expect(await readAll(await store.get(await sha256Hex(exact)))).toEqual(exact);
    // A stream shorter than its hint is refused (400) and its multipart upload aborted.
    const aborted = bucket.aborted;
    await expect(store.stage(chunkedStream(randomBytes(1000), 100), { atLeast: R2_PART_BYTES + 1 })).rejects.toMatchObject({ status: 400 });
    expect(bucket.aborted).toBe(aborted + 1);
    // A stream longer than its hint by more than a part: the held rest goes out in parts of the same size.
    const longer = randomBytes(3 * R2_PART_BYTES + 777);
    const s3 = await store.stage(chunkedStream(longer, 65_536), { atLeast: R2_PART_BYTES + 10 });
    await s3.commit(await sha256Hex(longer));
    expect(bucket.partSizes.slice(-4)).toEqual([R2_PART_BYTES + 10, R2_PART_BYTES + 10, R2_PART_BYTES + 10, 747]);
    expect(await readAll(await store.get(await sha256Hex(longer)))).toEqual(longer);
  });

  test('part plan: parts of one size ≥ 5 MiB that cover the bound but for fewer than k bytes', () => {
    expect(partPlan(0)).toEqual({ partBytes: R2_PART_BYTES, streamed: 0 });
    expect(partPlan(R2_PART_BYTES - 1)).toEqual({ partBytes: R2_PART_BYTES, streamed: 0 });
    for (const atLeast of [R2_PART_BYTES, 7 * 1024 * 1024 - 1, 2 * R2_PART_BYTES - 1, 50 * 1024 * 1024 - 65_536, 1e9 + 7]) {
      const { partBytes, streamed } = partPlan(atLeast);
      expect(partBytes).toBeGreaterThanOrEqual(R2_PART_BYTES);
      expect(streamed * partBytes).toBeLessThanOrEqual(atLeast);
      expect(atLeast - streamed * partBytes).toBeLessThan(streamed);
    }
  });

  test('with a Content-Length (bound = size - framing allowance), at most the allowance and a chunk are ever held', async () => {
    for (const size of [7 * 1024 * 1024, 23 * 1024 * 1024 + 7]) {
      const bucket = new FakeBucket();
      const store = r2BlobStore(bucket);
      const data = randomBytes(size);
      // Source bytes read by the stage but not yet in the bucket, at every pull.
      let pulled = 0;
      let mostHeld = 0;
      const inner = chunkedStream(data, 65_536).getReader();
      const source = new ReadableStream<Uint8Array>({
        async pull(c) {
          mostHeld = Math.max(mostHeld, pulled - bucket.received.n);
          const { done, value } = await inner.read();
          if (done) return c.close();
          pulled += value.byteLength;
          c.enqueue(value);
        },
      });
      const staged = await store.stage(source, { atLeast: size - 65_536 });
      const { partBytes, streamed } = partPlan(size - 65_536);
      expect(bucket.partSizes).toEqual([...Array(streamed).fill(partBytes), size - streamed * partBytes]);
      expect(mostHeld).toBeLessThanOrEqual(65_536 + 2 * 65_536);
      await staged.commit(await sha256Hex(data));
      expect(await readAll(await store.get(await sha256Hex(data)))).toEqual(data);
    }
  });

  test('commit of an existing key writes nothing; stream errors abort the multipart upload', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const data = new TextEncoder().encode('same');
    const key = await sha256Hex(data);
    await (await store.stage(chunkedStream(data))).commit(key);
    const firstUpload = bucket.objects.get(`blobs/${key}`)!.uploaded;
    await (await store.stage(chunkedStream(data))).commit(key);
    expect(bucket.objects.get(`blobs/${key}`)!.uploaded).toBe(firstUpload);

    let sent = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > R2_PART_BYTES + 1) return c.error(new Error('client went away'));
        sent += 1 << 20;
        c.enqueue(new Uint8Array(1 << 20));
      },
    });
    await expect(store.stage(failing)).rejects.toThrow('client went away');
    expect(bucket.aborted).toBe(1);
    expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
  });

  test('list and purgeStaging; keys must be sha256 hex', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const data = new TextEncoder().encode('listed');
    const key = await sha256Hex(data);
    await (await store.stage(chunkedStream(data))).commit(key);
    bucket.objects.set('staging/old', { bytes: new Uint8Array(1), uploaded: new Date(Date.now() - 7200_000) });
    bucket.objects.set('staging/new', { bytes: new Uint8Array(1), uploaded: new Date() });
    const keys: string[] = [];
    for await (const e of store.list()) keys.push(e.key);
    expect(keys).toEqual([key]);
    expect(await store.purgeStaging(Date.now() - 3600_000)).toBe(1);
    expect(bucket.objects.has('staging/new')).toBe(true);
    await expect(store.get('../secret')).rejects.toThrow();
    await store.delete(key);
    expect(await store.head(key)).toBeNull();
  });

  test('list(after) resumes in key order after a given key (the orphan sweep\'s cursor)', async () => {
    const store = r2BlobStore(new FakeBucket());
    const keys: string[] = [];
    for (const text of ['a', 'b', 'c', 'd']) {
      const data = new TextEncoder().encode(text);
      const key = await sha256Hex(data);
      await (await store.stage(chunkedStream(data))).commit(key);
      keys.push(key);
    }
    keys.sort();
    const listed = async (after?: string) => {
      const out: string[] = [];
      for await (const e of store.list(after)) out.push(e.key);
      return out;
    };
    expect(await listed()).toEqual(keys);
    expect(await listed(keys[1])).toEqual(keys.slice(2));
    expect(await listed(keys[3])).toEqual([]);
  });
});
