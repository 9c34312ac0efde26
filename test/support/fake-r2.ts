import { R2_PART_BYTES, type R2BucketLike, type R2MultipartUploadLike, type R2ObjectLike, type R2UploadedPartLike } from '../../src/adapters/workers/r2-blobs.ts';
import { chunkedStream } from './files.ts';

/** Reads a stream to the end, counting each chunk into `received` as it arrives. */
async function drain(s: ReadableStream<Uint8Array>, received: { n: number }): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = s.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.slice());
    received.n += value.byteLength;
  }
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let off = 0;
  for (const c of chunks) (out.set(c, off), (off += c.byteLength));
  return out;
}

/**
 * An in-memory stand-in of the R2 binding, as strict as R2 where the adapter could go wrong: a
 * streamed put or part must declare its length (FixedLengthStream) and carry exactly that many
 * bytes, every part but the last must be ≥ 5 MiB and of one size with the last no larger, listing
 * is in key order.
 */
export class FakeBucket implements R2BucketLike {
  objects = new Map<string, { bytes: Uint8Array; uploaded: Date }>();
  partSizes: number[] = [];
  aborted = 0;
  /** Bytes that reached the bucket so far through streamed puts (not parts), counted as they arrive. */
  received = { n: 0 };
  async head(key: string): Promise<R2ObjectLike | null> {
    const o = this.objects.get(key);
    return o ? { key, size: o.bytes.byteLength, uploaded: o.uploaded } : null;
  }
  async get(key: string, options?: { range?: { offset: number; length: number } }) {
    const o = this.objects.get(key);
    if (!o) return null;
    const r = options?.range;
    const bytes = r ? o.bytes.slice(r.offset, r.offset + r.length) : o.bytes;
    return { key, size: o.bytes.byteLength, uploaded: o.uploaded, body: chunkedStream(bytes, 100_000) };
  }
  async put(key: string, value: ReadableStream | Uint8Array) {
    const known = (value as { knownLength?: number }).knownLength;
    if (value instanceof ReadableStream && known === undefined) throw new Error('Provided readable stream must have a known length');
    const bytes = value instanceof Uint8Array ? value.slice() : await drain(value, this.received);
    if (value instanceof ReadableStream && bytes.byteLength !== known) throw new Error(`put ${key}: ${bytes.byteLength} bytes, declared ${known}`);
    this.objects.set(key, { bytes, uploaded: new Date() });
    return { key, size: bytes.byteLength, uploaded: new Date() };
  }
  async delete(keys: string | string[]) {
    for (const k of Array.isArray(keys) ? keys : [keys]) this.objects.delete(k);
  }
  async list(options?: { prefix?: string; startAfter?: string }) {
    // As R2: keys in ascending order, after startAfter when given.
    const objects = [...this.objects.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .filter(([k]) => k.startsWith(options?.prefix ?? '') && (options?.startAfter === undefined || k > options.startAfter))
      .map(([key, o]) => ({ key, size: o.bytes.byteLength, uploaded: o.uploaded }));
    return { objects, truncated: false };
  }
  async createMultipartUpload(key: string): Promise<R2MultipartUploadLike> {
    const parts = new Map<number, Uint8Array>();
    return {
      uploadPart: async (n: number, value: Uint8Array | ReadableStream): Promise<R2UploadedPartLike> => {
        const known = (value as { knownLength?: number }).knownLength;
        if (value instanceof ReadableStream && known === undefined) throw new Error('Provided readable stream must have a known length');
        const bytes = value instanceof Uint8Array ? value.slice() : await drain(value, { n: 0 });
        if (value instanceof ReadableStream && bytes.byteLength !== known) throw new Error(`part ${n}: ${bytes.byteLength} bytes, declared ${known}`);
        this.partSizes.push(bytes.byteLength);
        parts.set(n, bytes);
        return { partNumber: n, etag: `e${n}` };
      },
      complete: async (uploaded: R2UploadedPartLike[]) => {
        const chunks = uploaded.map((p) => parts.get(p.partNumber)!);
        const sizes = chunks.map((c) => c.byteLength);
        if (sizes.slice(0, -1).some((n) => n < R2_PART_BYTES || n !== sizes[0]) || sizes.at(-1)! > sizes[0]!) {
          throw new Error(`InvalidPart: part sizes ${sizes.join(', ')}`);
        }
        const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
        let off = 0;
        for (const c of chunks) {
          bytes.set(c, off);
          off += c.byteLength;
        }
        this.objects.set(key, { bytes, uploaded: new Date() });
        return { key, size: bytes.byteLength, uploaded: new Date() };
      },
      abort: async () => void this.aborted++,
    };
  }
}

/** Workers' FixedLengthStream for Bun: a pass-through whose readable side declares its length (what FakeBucket checks). */
export function installFixedLengthStream(): void {
  (globalThis as Record<string, unknown>).FixedLengthStream = class {
    readable: ReadableStream;
    writable: WritableStream;
    constructor(length: number) {
      const t = new TransformStream();
      this.readable = Object.assign(t.readable, { knownLength: length });
      this.writable = t.writable;
    }
  };
}
