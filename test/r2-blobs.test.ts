import { beforeAll, describe, expect, test } from 'bun:test';
import { R2_HELD_MAX_BYTES, R2_PART_BYTES, R2_PIECE_BYTES, r2BlobStore } from '../src/adapters/workers/r2-blobs.ts';
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
  /** `data` as a stream of 64 KiB chunks that records the most bytes read from it but not yet in `bucket`. */
  const watched = (data: Uint8Array, bucket: FakeBucket) => {
    const inner = chunkedStream(data, 65_536).getReader();
    let pulled = 0;
    const seen = { mostHeld: 0 };
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        seen.mostHeld = Math.max(seen.mostHeld, pulled - bucket.received.n);
        const { done, value } = await inner.read();
        if (done) return c.close();
        pulled += value.byteLength;
        c.enqueue(value);
      },
    });
    return { stream, seen };
  };

  test('an empty file commits on every path (R2 takes a stream of known length 0)', async () => {
    const empty = new Uint8Array(0);
    const key = await sha256Hex(empty);
    for (const hint of [{}, { atLeast: 0, atMost: 0 }, { atLeast: 0, atMost: 200 }]) {
      const bucket = new FakeBucket();
      const store = r2BlobStore(bucket);
      const staged = await store.stage(chunkedStream(empty), hint);
      expect(staged.size).toBe(0);
      await staged.commit(key);
      await staged.discard();
      expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
      expect(await store.head(key)).toEqual({ size: 0 });
    }
  });

  test('a held or chunked body longer than its bound (atMost) is refused, as a streamed one is', async () => {
    for (const size of [600 * 1024, 3 * 1024 * 1024]) {
      const bucket = new FakeBucket();
      await expect(r2BlobStore(bucket).stage(chunkedStream(randomBytes(size)), { atLeast: 0, atMost: 512 * 1024 })).rejects.toThrow('longer than its Content-Length');
      expect([bucket.objects.size, bucket.partSizes.length]).toEqual([0, 0]);
    }
  });

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

  test('without a length, at most 1 MiB is held: pieces spill to R2, five make a 5 MiB part, the rest the last part; copied at commit', async () => {
    for (const [size, parts] of [
      [2 * R2_PART_BYTES + 12345, [R2_PART_BYTES, R2_PART_BYTES, 12345]],
      [7 * 1024 * 1024, [R2_PART_BYTES, 2 * 1024 * 1024]],
      [3 * R2_PIECE_BYTES + 5, []],
    ] as const) {
      const bucket = new FakeBucket();
      const store = r2BlobStore(bucket);
      const data = randomBytes(size);
      const key = await sha256Hex(data);
      const { stream, seen } = watched(data, bucket);
      const staged = await store.stage(stream);
      expect(staged.size).toBe(size);
      expect(bucket.partSizes).toEqual([...parts]);
      // Pieces in R2 count as sent; never more than a piece and a chunk in memory.
      expect(seen.mostHeld).toBeLessThanOrEqual(R2_PIECE_BYTES + 65_536);
      // Only the staging object is left (the pieces are deleted once in a part or the object).
      const left = [...bucket.objects.keys()];
      expect(left).toHaveLength(1);
      expect(left[0]).toMatch(/^staging\/[0-9a-f-]+$/);
      await staged.commit(key);
      await staged.discard();
      expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
      expect(await readAll(await store.get(key))).toEqual(data);
    }
  });

  test('with Content-Length over 1 MiB the file streams into one staging put padded to the bound, and commit copies its first size bytes', async () => {
    for (const size of [R2_HELD_MAX_BYTES + 1, 4.9 * 1024 * 1024, 7 * 1024 * 1024 + 5]) {
      const bucket = new FakeBucket();
      const store = r2BlobStore(bucket);
      const data = randomBytes(Math.floor(size));
      const key = await sha256Hex(data);
      // As the upload passes it: the body's length (file + ~300 bytes of framing) and that minus 64 KiB.
      const atMost = data.byteLength + 300;
      const { stream, seen } = watched(data, bucket);
      const staged = await store.stage(stream, { atLeast: atMost - 65_536, atMost });
      expect(staged.size).toBe(data.byteLength);
      // Never more than a chunk or two between the body and R2.
      expect(seen.mostHeld).toBeLessThanOrEqual(2 * 65_536);
      expect(bucket.partSizes).toEqual([]);
      const [stagingKey, ...others] = [...bucket.objects.keys()];
      expect(others).toEqual([]);
      expect(stagingKey).toStartWith('staging/');
      const stagedBytes = bucket.objects.get(stagingKey!)!.bytes;
      expect(stagedBytes.byteLength).toBe(atMost);
      expect(stagedBytes.subarray(data.byteLength).every((b) => b === 0)).toBe(true);
      await staged.commit(key);
      await staged.discard();
      expect([...bucket.objects.keys()]).toEqual([`blobs/${key}`]);
      expect(await readAll(await store.get(key))).toEqual(data);
    }
    // Up to 1 MiB announced: held, one put at commit.
    const bucket = new FakeBucket();
    const small = randomBytes(R2_HELD_MAX_BYTES - 300);
    const staged = await r2BlobStore(bucket).stage(chunkedStream(small), { atLeast: 0, atMost: R2_HELD_MAX_BYTES });
    expect(bucket.objects.size).toBe(0);
    await staged.commit(await sha256Hex(small));
    expect([...bucket.objects.keys()]).toEqual([`blobs/${await sha256Hex(small)}`]);
  });

  test('a streamed body shorter than atLeast or longer than atMost, a stream error or a refused caller store nothing', async () => {
    const bucket = new FakeBucket();
    const store = r2BlobStore(bucket);
    const mib = 1024 * 1024;
    await expect(store.stage(chunkedStream(randomBytes(2 * mib)), { atLeast: 3 * mib, atMost: 3 * mib + 65_536 })).rejects.toMatchObject({ status: 400 });
    await expect(store.stage(chunkedStream(randomBytes(3 * mib)), { atLeast: 0, atMost: 2 * mib })).rejects.toMatchObject({ status: 400 });
    let sent = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent > 2 * mib) return c.error(new Error('client went away'));
        sent += mib;
        c.enqueue(new Uint8Array(mib));
      },
    });
    await expect(store.stage(failing, { atLeast: 0, atMost: 4 * mib })).rejects.toThrow('client went away');
    const before = bucket.received.n;
    const refused = store.stage(chunkedStream(randomBytes(2 * mib)), { atMost: 2 * mib, beforeWrite: () => Promise.reject(new Error('401')) });
    await expect(refused).rejects.toThrow('401');
    expect(bucket.received.n).toBe(before);
    expect(bucket.objects.size).toBe(0);
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
