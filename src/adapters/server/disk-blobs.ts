import { close as closeFd, open as openFd, read as readFd } from 'node:fs';
import { link, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { BlobStore, ByteRange, StagedBlob, StageHint } from '../../core/ports.ts';

const KEY = /^[0-9a-f]{64}$/;
const HEX2 = /^[0-9a-f]{2}$/;
const TMP_DIR = 'tmp';
/** Read size of a download: large enough for few syscalls, small enough that memory stays flat. */
const READ_CHUNK = 256 * 1024;

function assertKey(key: string) {
  if (!KEY.test(key)) throw new Error('disk-blobs: key must be a sha256 hex string');
}

const isCode = (e: unknown, code: string) => (e as { code?: string } | null)?.code === code;

async function unlinkQuiet(path: string) {
  try {
    await unlink(path);
  } catch (e) {
    if (!isCode(e, 'ENOENT')) throw e;
  }
}

/**
 * Blobs as files under `root`, fanned out by the first two byte pairs of the key
 * (`ab/cd/abcd…`) so no folder grows past a few hundred entries. Uploads are written to
 * `root/tmp/<uuid>` (same filesystem), flushed, then hard-linked into place: a crash never leaves a
 * half file under a content key, and committing an existing key just drops the temporary copy.
 */
export function diskBlobStore(root: string): BlobStore {
  const tmpRoot = join(root, TMP_DIR);
  const pathOf = (key: string) => join(root, key.slice(0, 2), key.slice(2, 4), key);

  async function stage(body: ReadableStream<Uint8Array>, hint: StageHint = {}): Promise<StagedBlob> {
    await hint.beforeWrite?.();
    await mkdir(tmpRoot, { recursive: true });
    const tmp = join(tmpRoot, crypto.randomUUID());
    const fh = await open(tmp, 'wx', 0o600);
    let size = 0;
    try {
      const reader = body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          // One awaited write per chunk is the backpressure: the next chunk is read only after this
          // one is in the kernel, so memory stays at one chunk whatever the upload size.
          let off = 0;
          while (off < value.byteLength) off += (await fh.write(value, off, value.byteLength - off)).bytesWritten;
          size += value.byteLength;
        }
      } catch (e) {
        await reader.cancel(e).catch(() => undefined);
        throw e;
      }
      await fh.datasync();
      await fh.close();
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlinkQuiet(tmp);
      throw e;
    }
    return {
      size,
      async commit(key) {
        assertKey(key);
        const dest = pathOf(key);
        await mkdir(join(dest, '..'), { recursive: true });
        try {
          await link(tmp, dest);
        } catch (e) {
          // Same key means same bytes: the copy already in place is as good as ours.
          if (!isCode(e, 'EEXIST')) throw e;
        }
      },
      discard: () => unlinkQuiet(tmp),
    };
  }

  return {
    stage,
    async get(key: string, range?: ByteRange) {
      assertKey(key);
      const path = pathOf(key);
      try {
        await stat(path);
      } catch (e) {
        if (isCode(e, 'ENOENT')) return null;
        throw e;
      }
      return fileStream(path, range?.offset ?? 0, range ? range.offset + range.length : Infinity);
    },
    async head(key) {
      assertKey(key);
      try {
        const s = await stat(pathOf(key));
        return { size: s.size };
      } catch (e) {
        if (isCode(e, 'ENOENT')) return null;
        throw e;
      }
    },
    async delete(key) {
      assertKey(key);
      await unlinkQuiet(pathOf(key));
    },
    async deleteMany(keys) {
      keys.forEach(assertKey);
      for (const key of keys) await unlinkQuiet(pathOf(key));
    },
    async *list(after = '') {
      // Sorted at each level, and folders wholly before `after` skipped, so keys come in order.
      const sorted = async (path: string) => (await readdirQuiet(path)).sort();
      for (const a of await sorted(root)) {
        if (!HEX2.test(a) || a < after.slice(0, 2)) continue;
        for (const b of await sorted(join(root, a))) {
          if (!HEX2.test(b) || a + b < after.slice(0, 4)) continue;
          for (const key of await sorted(join(root, a, b))) {
            if (!KEY.test(key) || !key.startsWith(a + b) || key <= after) continue;
            const s = await stat(join(root, a, b, key)).catch(() => null);
            if (s) yield { key, modifiedAt: s.mtimeMs };
          }
        }
      }
    },
    async purgeStaging(before) {
      let n = 0;
      for (const name of await readdirQuiet(tmpRoot)) {
        const path = join(tmpRoot, name);
        const s = await stat(path).catch(() => null);
        if (s?.isFile() && s.mtimeMs < before) {
          await unlinkQuiet(path);
          n++;
        }
      }
      return n;
    },
  };
}

async function readdirQuiet(path: string): Promise<string[]> {
  try {
    return await readdir(path);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return [];
    throw e;
  }
}

const fd = { open: promisify(openFd), read: promisify(readFd), close: promisify(closeFd) };

/**
 * Bytes `from` .. `to - 1` of a file as a web stream, read on demand (one chunk per pull, so a slow
 * client holds one chunk), on Bun, Deno and Node alike. The file opens on the first read, so a
 * stream nobody reads (HEAD, 304) holds no descriptor; it closes at the end, on error or on cancel.
 * A plain descriptor, not a FileHandle: runtimes treat a FileHandle reaching GC unclosed (a stream
 * dropped half-read) as an uncaught error.
 */
function fileStream(path: string, from: number, to: number): ReadableStream<Uint8Array> {
  let pos = from;
  let handle: number | undefined;
  const close = async () => {
    const h = handle;
    handle = undefined;
    if (h !== undefined) await fd.close(h);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const want = Math.min(READ_CHUNK, to - pos);
          if (want > 0) handle ??= await fd.open(path, 'r');
          const buf = new Uint8Array(Math.max(want, 0));
          const bytesRead = want > 0 ? (await fd.read(handle!, buf, 0, want, pos)).bytesRead : 0;
          if (bytesRead === 0) {
            await close();
            ctrl.close();
            return;
          }
          pos += bytesRead;
          ctrl.enqueue(bytesRead < want ? buf.subarray(0, bytesRead) : buf);
        } catch (e) {
          await close().catch(() => undefined);
          throw e;
        }
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
}
