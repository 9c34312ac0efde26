import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { diskBlobStore } from '../src/adapters/server/disk-blobs.ts';
import { chunkedStream, filesUnder, randomBytes, sha256Hex } from './support/files.ts';
import { scratchDir } from './support/tmp-root.ts';

const root = scratchDir('blobs');
const store = diskBlobStore(root);

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (!stream) throw new Error('no stream');
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function put(bytes: Uint8Array, chunkSize = 7919) {
  const key = await sha256Hex(bytes);
  const staged = await store.stage(chunkedStream(bytes, chunkSize));
  expect(staged.size).toBe(bytes.byteLength);
  await staged.commit(key);
  await staged.discard();
  return key;
}

describe('disk blob store', () => {
  test('stage + commit stores bytes byte-exact under a fan-out path; no temporary file remains', async () => {
    const bytes = randomBytes(300_001);
    const key = await put(bytes);
    const path = join(root, key.slice(0, 2), key.slice(2, 4), key);
    expect(existsSync(path)).toBe(true);
    expect(new Uint8Array(readFileSync(path)) as Uint8Array).toEqual(bytes);
    expect(await readAll(await store.get(key))).toEqual(bytes);
    expect(await store.head(key)).toEqual({ size: bytes.byteLength });
    expect(filesUnder(join(root, 'tmp'))).toEqual([]);
  });

  test('ranges read exactly the requested slice', async () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const key = await put(bytes, 10);
    expect(await readAll(await store.get(key, { offset: 0, length: 1 }))).toEqual(bytes.slice(0, 1));
    expect(await readAll(await store.get(key, { offset: 100, length: 56 }))).toEqual(bytes.slice(100, 156));
    expect(await readAll(await store.get(key, { offset: 255, length: 1 }))).toEqual(bytes.slice(255));
  });

  test('committing an existing key keeps the stored copy; delete removes it; missing keys are null', async () => {
    const bytes = new TextEncoder().encode('same content');
    const key = await put(bytes);
    await put(bytes);
    expect(filesUnder(root).filter((f) => f.endsWith(key))).toHaveLength(1);
    await store.delete(key);
    expect(await store.head(key)).toBeNull();
    expect(await store.get(key)).toBeNull();
    await store.delete(key); // idempotent
  });

  test('a failing stream leaves no temporary file and nothing committed', async () => {
    const before = filesUnder(root);
    let n = 0;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (n++ < 3) c.enqueue(randomBytes(1000));
        else c.error(new Error('client went away'));
      },
    });
    await expect(store.stage(failing)).rejects.toThrow('client went away');
    expect(filesUnder(root)).toEqual(before);
  });

  test('keys that are not sha256 hex are refused, so nothing can address a path', async () => {
    for (const bad of ['../../etc/passwd', 'ABCDEF'.repeat(11).slice(0, 64), 'a'.repeat(63), `${'a'.repeat(62)}/x`]) {
      await expect(store.get(bad)).rejects.toThrow();
      await expect(store.delete(bad)).rejects.toThrow();
      const staged = await store.stage(chunkedStream(new Uint8Array([1])));
      await expect(staged.commit(bad)).rejects.toThrow();
      await staged.discard();
    }
  });

  test('list yields committed keys; purgeStaging removes only old temporary files', async () => {
    const key = await put(new TextEncoder().encode('listed'));
    const listed: string[] = [];
    for await (const e of store.list()) listed.push(e.key);
    expect(listed).toContain(key);
    mkdirSync(join(root, 'tmp'), { recursive: true });
    writeFileSync(join(root, 'tmp', 'old'), 'x');
    writeFileSync(join(root, 'tmp', 'fresh'), 'y');
    const hourAgo = (Date.now() - 2 * 3600_000) / 1000;
    utimesSync(join(root, 'tmp', 'old'), hourAgo, hourAgo);
    expect(await store.purgeStaging(Date.now() - 3600_000)).toBe(1);
    expect(filesUnder(join(root, 'tmp'))).toEqual(['fresh']);
  });

  test('list(after) yields keys in ascending order after the given one (the orphan sweep resumes there)', async () => {
    const keys: string[] = [];
    for (let i = 0; i < 40; i++) keys.push(await put(new TextEncoder().encode(`ordered ${i}`)));
    const all: string[] = [];
    for await (const e of store.list()) all.push(e.key);
    expect(all).toEqual([...all].sort());
    for (const k of keys) expect(all).toContain(k);
    const from = all[17]!;
    const rest: string[] = [];
    for await (const e of store.list(from)) rest.push(e.key);
    expect(rest).toEqual(all.slice(18));
  });
});
