import type { BlobStore, ByteRange, StageHint, StagedBlob } from '../../core/ports.ts';
import { AppError } from '../../core/errors.ts';

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
/** R2's smallest multipart part (every part but the last); also the most one upload holds in memory. */
export const R2_PART_BYTES = 5 * 1024 * 1024;
/** R2's most parts per multipart upload. */
const R2_MAX_PARTS = 10_000;

/**
 * The part size and how many parts can be streamed for a stream of at least `atLeast` bytes: k parts
 * of ⌊atLeast / k⌋ bytes (k = ⌊atLeast / 5 MiB⌋, so each is ≥ 5 MiB and together they leave fewer
 * than k bytes of the bound uncovered), or no streamed part and 5 MiB parts when the bound is under
 * one part. Every further part is of the same size, and the last no larger, as R2 wants.
 */
export function partPlan(atLeast: number): { partBytes: number; streamed: number } {
  const streamed = Math.min(Math.floor(atLeast / R2_PART_BYTES), R2_MAX_PARTS - 1);
  return streamed > 0 ? { partBytes: Math.floor(atLeast / streamed), streamed } : { partBytes: R2_PART_BYTES, streamed: 0 };
}

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

function assertKey(key: string) {
  if (!KEY.test(key)) throw new Error('r2-blobs: key must be a sha256 hex string');
}

/**
 * Blobs in an R2 bucket under `blobs/<sha256>`. R2 has no rename, a streamed put or part needs its
 * length up front, and every part of a multipart upload but the last must be of one size (≥ 5 MiB)
 * with the last no larger. Small uploads are held (as the chunks that arrived: memory grows with the
 * upload, never allocated up front) and put straight under their content key at commit; larger
 * ones go to `staging/<uuid>` as a multipart upload and are copied under the content key at commit
 * (inside R2, streamed). With a lower bound of the size (`hint.atLeast`, from Content-Length), the
 * parts that bound guarantees are streamed to R2 as the bytes arrive, sized so that they cover it
 * (k parts of ⌊atLeast / k⌋ bytes), and only the rest (the framing allowance) is held; without one
 * (a chunked body) each 5 MiB part is held before it goes out.
 */
export function r2BlobStore(bucket: R2BucketLike): BlobStore {
  const objectKey = (key: string) => BLOB_PREFIX + key;

  async function stage(body: ReadableStream<Uint8Array>, hint: StageHint = {}): Promise<StagedBlob> {
    const reader = body.getReader();
    let held: Uint8Array[] = [];
    let heldBytes = 0;
    let size = 0;
    // Assigned inside sendPart; the cast keeps TypeScript from narrowing it to null below.
    let upload = null as { key: string; mp: R2MultipartUploadLike; parts: R2UploadedPartLike[] } | null;
    const begin = async () => {
      if (!upload) {
        // Nothing reaches R2 before this: a body under one part stays in memory until commit.
        await hint.beforeWrite?.();
        const key = STAGING_PREFIX + crypto.randomUUID();
        upload = { key, mp: await bucket.createMultipartUpload(key), parts: [] };
      }
      return upload;
    };
    // Parts the stream is known to fill (hint.atLeast) are streamed to R2 as the bytes arrive,
    // never held: each is exactly one part long, so its length is known up front. Only what comes
    // after them is held and sent as below, in parts of the same size.
    const { partBytes, streamed: direct } = partPlan(hint.atLeast ?? 0);
    let started = 0;
    let streaming: { writer: WritableStreamDefaultWriter<Uint8Array>; sent: Promise<R2UploadedPartLike>; left: number } | null = null;
    const sendPart = async () => {
      const up = await begin();
      const chunks = held;
      const length = heldBytes;
      held = [];
      heldBytes = 0;
      up.parts.push(await up.mp.uploadPart(up.parts.length + 1, lengthStream(chunks, length)));
    };
    try {
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        size += read.value.byteLength;
        let rest: Uint8Array = read.value;
        while (rest.byteLength > 0 && (streaming || started < direct)) {
          if (!streaming) {
            started++;
            const up = await begin();
            const { readable, writable } = new FixedLengthStream(partBytes);
            const writer = writable.getWriter();
            const sent = up.mp.uploadPart(up.parts.length + 1, readable);
            // A failed part upload makes the pending writes fail too instead of waiting forever.
            sent.catch((e) => writer.abort(e).catch(() => undefined));
            streaming = { writer, sent, left: partBytes };
          }
          const piece = rest.subarray(0, streaming.left);
          rest = rest.subarray(piece.byteLength);
          await streaming.writer.write(piece);
          streaming.left -= piece.byteLength;
          if (streaming.left === 0) {
            await streaming.writer.close();
            (await begin()).parts.push(await streaming.sent);
            streaming = null;
          }
        }
        if (rest.byteLength === 0) continue;
        // A view into a larger buffer (a parser's input chunk) is copied, so it does not keep that alive.
        let chunk = rest.byteLength === rest.buffer.byteLength ? rest : rest.slice();
        while (heldBytes + chunk.byteLength >= partBytes) {
          const n = partBytes - heldBytes;
          held.push(chunk.subarray(0, n));
          heldBytes += n;
          chunk = chunk.subarray(n);
          await sendPart();
        }
        if (chunk.byteLength > 0) {
          held.push(chunk);
          heldBytes += chunk.byteLength;
        }
      }
      if (streaming) throw new AppError('BAD_REQUEST', 'file: the body is shorter than its Content-Length says');
      if (upload && heldBytes > 0) await sendPart();
      if (upload) await upload.mp.complete(upload.parts);
    } catch (e) {
      if (streaming) await streaming.writer.abort(e).catch(() => undefined);
      await reader.cancel(e).catch(() => undefined);
      if (upload) await upload.mp.abort().catch(() => undefined);
      throw e;
    }

    const staged = upload?.key ?? null;
    const small = staged ? null : held;
    return {
      size,
      async commit(key) {
        assertKey(key);
        if (await bucket.head(objectKey(key))) return;
        if (small) {
          await bucket.put(objectKey(key), lengthStream(small, size));
          return;
        }
        const source = await bucket.get(staged!);
        if (!source) throw new Error('r2-blobs: staged object vanished before commit');
        const { readable, writable } = new FixedLengthStream(source.size);
        const piping = source.body.pipeTo(writable);
        await Promise.all([bucket.put(objectKey(key), readable), piping]);
      },
      async discard() {
        if (staged) await bucket.delete(staged);
      },
    };
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
