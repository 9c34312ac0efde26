import type { BlobStore, ByteRange, StageHint, StagedBlob } from '../../core/ports.ts';
import { AppError, badRequest } from '../../core/errors.ts';

/*
 * The parts of the Workers R2 binding this adapter uses, declared here so the project does not
 * need @cloudflare/workers-types (whose globals clash with bun-types). Shapes follow the binding.
 */
export interface R2ObjectLike {
  key: string;
  size: number;
  uploaded: Date;
}
export interface R2ObjectBodyLike extends R2ObjectLike {
  body: ReadableStream<Uint8Array>;
}
export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}
export interface R2MultipartUploadLike {
  uploadPart(partNumber: number, value: Uint8Array | ReadableStream): Promise<R2UploadedPartLike>;
  complete(parts: R2UploadedPartLike[]): Promise<R2ObjectLike>;
  abort(): Promise<void>;
}
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>;
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<R2ObjectBodyLike | null>;
  put(key: string, value: ReadableStream | Uint8Array, options?: { sha256?: string }): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: { prefix?: string; cursor?: string; limit?: number; startAfter?: string }): Promise<{
    objects: R2ObjectLike[];
    truncated: boolean;
    cursor?: string;
  }>;
  createMultipartUpload(key: string): Promise<R2MultipartUploadLike>;
}

/** Workers' stream with a declared length, which R2 needs to accept a streamed put. */
declare const FixedLengthStream: new (length: number) => TransformStream<Uint8Array, Uint8Array>;

const KEY = /^[0-9a-f]{64}$/;
const BLOB_PREFIX = 'blobs/';
const STAGING_PREFIX = 'staging/';
/** R2's smallest multipart part (every part but the last): five spilled pieces of a chunked body make one. */
export const R2_PART_BYTES = 5 * 1024 * 1024;
/**
 * A body announced (Content-Length) at most this long is held and put once at commit: one R2 write,
 * none before the caller is known. A longer one is streamed to R2 as it arrives.
 */
export const R2_HELD_MAX_BYTES = 1024 * 1024;
/**
 * A body of unknown length (no Content-Length) is held at most this much at a time: each full piece
 * is spilled to R2 as an object of its own, and five of them are read back into one 5 MiB part.
 */
export const R2_PIECE_BYTES = 1024 * 1024;
/** R2's largest single put, with room to spare; a longer announced body goes the multipart way. */
const R2_PUT_MAX_BYTES = 5 * 1024 ** 3 - 5 * 1024 * 1024;

/** `chunks` (exactly `length` bytes in all) as a stream R2 accepts: a streamed body needs its length up front. */
function lengthStream(chunks: Uint8Array[], length: number): ReadableStream<Uint8Array> {
  const { readable, writable } = new FixedLengthStream(length);
  const writer = writable.getWriter();
  void (async () => {
    try {
      for (const c of chunks) await writer.write(c);
      await writer.close();
    } catch (e) {
      await writer.abort(e).catch(() => undefined);
    }
  })();
  return readable;
}

/** Zeros written at most at once when a streamed put is padded to its announced length. */
const PAD_BYTES = 64 * 1024;
const shortBody = () => new AppError('BAD_REQUEST', 'file: the body is shorter than its Content-Length says');

function assertKey(key: string) {
  if (!KEY.test(key)) throw new Error('r2-blobs: key must be a sha256 hex string');
}

/**
 * Blobs in an R2 bucket under `blobs/<sha256>`. R2 has no rename, and a streamed put or part needs
 * its length up front, so an upload is staged one of two ways, never holding a large file whole:
 * - its length is bounded (`hint.atMost`, from Content-Length) and over R2_HELD_MAX_BYTES: one put
 *   of exactly `atMost` bytes to `staging/<uuid>`, streamed as the bytes arrive — the file, then
 *   zeros up to `atMost` (the multipart framing the bound also counted) — of which commit copies
 *   the first `size` bytes under the content key (inside R2, streamed);
 * - otherwise (a chunked body: its length is unknown) the bytes are held as the chunks that
 *   arrived (memory grows with the upload, never allocated up front), at most R2_PIECE_BYTES (1 MiB):
 *   a body under that is put straight under its content key at commit; each full piece is spilled
 *   to R2 as `staging/<uuid>.<n>`, five pieces are read back into one 5 MiB part of a multipart
 *   upload to `staging/<uuid>` (the pieces are then deleted), and that is copied at commit.
 */
export function r2BlobStore(bucket: R2BucketLike): BlobStore {
  const objectKey = (key: string) => BLOB_PREFIX + key;

  async function stage(body: ReadableStream<Uint8Array>, hint: StageHint = {}): Promise<StagedBlob> {
    const { atMost } = hint;
    if (atMost !== undefined && atMost > R2_HELD_MAX_BYTES && atMost <= R2_PUT_MAX_BYTES) return streamed(body, atMost, hint);
    const reader = body.getReader();
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    let size = 0;
    const id = STAGING_PREFIX + crypto.randomUUID();
    // Spilled pieces not yet in a part (each R2_PIECE_BYTES), and the multipart upload once a part is full.
    const pieces: string[] = [];
    let spilled = 0;
    // Assigned inside sendPart; the cast keeps TypeScript from narrowing it to null below.
    let upload = null as { mp: R2MultipartUploadLike; parts: R2UploadedPartLike[] } | null;
    let checked = false;
    // Nothing reaches R2 before this: a body under one piece stays in memory until commit.
    const check = async () => {
      if (!checked) await hint.beforeWrite?.();
      checked = true;
    };
    const takeHeld = () => {
      const chunks = held;
      held = [];
      heldBytes = 0;
      return chunks;
    };
    const spill = async () => {
      await check();
      const key = `${id}.${spilled++}`;
      pieces.push(key);
      await bucket.put(key, lengthStream(takeHeld(), R2_PIECE_BYTES));
    };
    const dropPieces = async (keys: string[]) => {
      await bucket.delete(keys);
      pieces.splice(0, keys.length);
    };
    /** The spilled pieces, then what is held, as one part. */
    const sendPart = async (length: number) => {
      await check();
      upload ??= { mp: await bucket.createMultipartUpload(id), parts: [] };
      const keys = pieces.slice();
      upload.parts.push(await upload.mp.uploadPart(upload.parts.length + 1, joined(keys, takeHeld(), length)));
      await dropPieces(keys);
    };
    try {
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        size += read.value.byteLength;
        // As the streamed path: a stream longer than its bound is refused (StageHint.atMost).
        if (hint.atMost !== undefined && size > hint.atMost) throw badRequest('file: the body is longer than its Content-Length says');
        // A view into a larger buffer (a parser's input chunk) is copied, so it does not keep that alive.
        let chunk = read.value.byteLength === read.value.buffer.byteLength ? read.value : read.value.slice();
        while (heldBytes + chunk.byteLength >= R2_PIECE_BYTES) {
          const n = R2_PIECE_BYTES - heldBytes;
          held.push(chunk.subarray(0, n));
          heldBytes += n;
          chunk = chunk.subarray(n);
          await spill();
          if (pieces.length === R2_PART_BYTES / R2_PIECE_BYTES) await sendPart(R2_PART_BYTES);
        }
        if (chunk.byteLength > 0) {
          held.push(chunk);
          heldBytes += chunk.byteLength;
        }
      }
      if (size < (hint.atLeast ?? 0)) throw shortBody();
      const rest = pieces.length * R2_PIECE_BYTES + heldBytes;
      if (upload) {
        if (rest > 0) await sendPart(rest);
        await upload.mp.complete(upload.parts);
        return stagedAt(id, size);
      }
      if (pieces.length > 0) {
        // Under one part but spilled: the pieces and the rest as one object.
        const keys = pieces.slice();
        await bucket.put(id, joined(keys, takeHeld(), rest));
        await dropPieces(keys);
        return stagedAt(id, size);
      }
    } catch (e) {
      await reader.cancel(e).catch(() => undefined);
      if (upload) await upload.mp.abort().catch(() => undefined);
      if (pieces.length) await bucket.delete(pieces).catch(() => undefined);
      throw e;
    }
    return stagedHeld(held, size);
  }

  /** Spilled pieces read back from R2, then `tail`, as one stream of `length` bytes (what R2 accepts). */
  function joined(keys: string[], tail: Uint8Array[], length: number): ReadableStream<Uint8Array> {
    const { readable, writable } = new FixedLengthStream(length);
    void (async () => {
      try {
        for (const key of keys) {
          const piece = await bucket.get(key);
          if (!piece) throw new Error('r2-blobs: a spilled piece vanished');
          // Between two native streams workerd pipes without handing the bytes to JavaScript.
          await piece.body.pipeTo(writable, { preventClose: true });
        }
        const writer = writable.getWriter();
        for (const c of tail) await writer.write(c);
        await writer.close();
      } catch (e) {
        // Errors the part's body, so the part fails; a failed pipe or write has done so already.
        await writable.abort(e).catch(() => undefined);
      }
    })();
    return readable;
  }

  /** A stage held in memory: put under its content key at commit. */
  function stagedHeld(chunks: Uint8Array[], size: number): StagedBlob {
    return {
      size,
      async commit(key) {
        assertKey(key);
        if (await bucket.head(objectKey(key))) return;
        await bucket.put(objectKey(key), lengthStream(chunks, size));
      },
      async discard() {},
    };
  }

  /** A stage in R2 under `staged`, whose first `size` bytes are the blob: copied under the content key at commit. */
  function stagedAt(staged: string, size: number): StagedBlob {
    return {
      size,
      async commit(key) {
        assertKey(key);
        if (await bucket.head(objectKey(key))) return;
        const source = await bucket.get(staged, { range: { offset: 0, length: size } });
        if (!source) throw new Error('r2-blobs: staged object vanished before commit');
        const { readable, writable } = new FixedLengthStream(size);
        const piping = source.body.pipeTo(writable);
        await Promise.all([bucket.put(objectKey(key), readable), piping]);
      },
      async discard() {
        await bucket.delete(staged);
      },
    };
  }

  /**
   * Streams `body` into one put of exactly `atMost` bytes, padded with zeros after its end; the
   * bytes in flight are all it holds. Fails (and nothing is stored) if the body is shorter than
   * `hint.atLeast` or longer than `atMost`.
   */
  async function streamed(body: ReadableStream<Uint8Array>, atMost: number, hint: StageHint): Promise<StagedBlob> {
    const reader = body.getReader();
    let size = 0;
    let writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
    let put: Promise<unknown> | undefined;
    const key = STAGING_PREFIX + crypto.randomUUID();
    try {
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        if (read.value.byteLength === 0) continue;
        if (!writer) {
          // Nothing reaches R2 before the first byte of the file, nor before the caller is checked.
          await hint.beforeWrite?.();
          const { readable, writable } = new FixedLengthStream(atMost);
          writer = writable.getWriter();
          const w = writer;
          put = bucket.put(key, readable);
          // A failed put makes the pending writes fail too instead of waiting forever.
          put.catch((e) => w.abort(e).catch(() => undefined));
        }
        size += read.value.byteLength;
        if (size > atMost) throw badRequest('file: the body is longer than its Content-Length says');
        await writer.write(read.value);
      }
      if (size < (hint.atLeast ?? 0)) throw shortBody();
      if (!writer) return stagedHeld([], 0);
      for (let left = atMost - size; left > 0; left -= PAD_BYTES) await writer.write(new Uint8Array(Math.min(PAD_BYTES, left)));
      await writer.close();
      await put;
    } catch (e) {
      // The put then fails (its body errored): R2 stores nothing.
      await writer?.abort(e).catch(() => undefined);
      await reader.cancel(e).catch(() => undefined);
      throw e;
    }
    return stagedAt(key, size);
  }

  return {
    stage,
    async get(key: string, range?: ByteRange) {
      assertKey(key);
      const obj = await bucket.get(objectKey(key), range ? { range } : undefined);
      return obj ? obj.body : null;
    },
    async head(key) {
      assertKey(key);
      const obj = await bucket.head(objectKey(key));
      return obj ? { size: obj.size } : null;
    },
    async delete(key) {
      assertKey(key);
      await bucket.delete(objectKey(key));
    },
    async deleteMany(keys) {
      keys.forEach(assertKey);
      // R2's delete takes up to 1000 keys per call.
      for (let i = 0; i < keys.length; i += 1000) await bucket.delete(keys.slice(i, i + 1000).map(objectKey));
    },
    async *list(after) {
      let cursor: string | undefined;
      // R2 lists in key order; startAfter resumes where an earlier sweep stopped.
      const start = after ? { startAfter: objectKey(after) } : {};
      do {
        const page = await bucket.list({ prefix: BLOB_PREFIX, ...(cursor ? { cursor } : start), limit: 1000 });
        for (const o of page.objects) {
          const key = o.key.slice(BLOB_PREFIX.length);
          if (KEY.test(key)) yield { key, modifiedAt: o.uploaded.getTime() };
        }
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
    },
    async purgeStaging(before) {
      let n = 0;
      let cursor: string | undefined;
      do {
        const page = await bucket.list({ prefix: STAGING_PREFIX, ...(cursor ? { cursor } : {}), limit: 1000 });
        const old = page.objects.filter((o) => o.uploaded.getTime() < before).map((o) => o.key);
        if (old.length) await bucket.delete(old);
        n += old.length;
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return n;
    },
  };
}
