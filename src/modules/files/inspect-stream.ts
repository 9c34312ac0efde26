import { sha256 } from '@noble/hashes/sha2.js';
import type { AppError } from '../../core/errors.ts';

/** What an upload stream turned out to be, known once it has been read to the end. */
export interface Inspection {
  size: number;
  sha256: string;
  /** The first `headBytes` bytes (fewer if the upload is shorter). */
  head: Uint8Array;
  /** The last `tailBytes` bytes. */
  tail: Uint8Array;
}

export interface InspectOptions {
  maxBytes: number;
  tooLarge: () => AppError;
  headBytes: number;
  tailBytes: number;
  /** Called once with the first bytes (at least `checkAfter` of them, or all if shorter); may throw to stop early. */
  checkHead?: (head: Uint8Array) => void;
  checkAfter?: number;
}

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/**
 * A pass-through that enforces the byte limit on the stream itself (so chunked bodies without
 * Content-Length are cut off too), hashes with incremental SHA-256 (Web Crypto has no streaming
 * digest; @noble/hashes is pure JS and runs on every runtime) and keeps the head and tail bytes
 * for type checks. `result()` is valid once the readable side has been fully consumed.
 */
export function inspectStream(opts: InspectOptions) {
  const hash = sha256.create();
  const head = new Uint8Array(opts.headBytes);
  let headLen = 0;
  let tail = new Uint8Array(0);
  let size = 0;
  let checked = !opts.checkHead;
  const checkAfter = opts.checkAfter ?? opts.headBytes;
  let error: AppError | undefined;

  const runCheck = () => {
    checked = true;
    opts.checkHead?.(head.subarray(0, headLen));
  };

  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      try {
        size += chunk.byteLength;
        if (size > opts.maxBytes) throw opts.tooLarge();
        if (headLen < head.byteLength) {
          const n = Math.min(chunk.byteLength, head.byteLength - headLen);
          head.set(chunk.subarray(0, n), headLen);
          headLen += n;
        }
        if (!checked && headLen >= checkAfter) runCheck();
        hash.update(chunk);
        if (opts.tailBytes > 0) {
          const joined = new Uint8Array(Math.min(opts.tailBytes, tail.byteLength + chunk.byteLength));
          const fromChunk = Math.min(chunk.byteLength, joined.byteLength);
          const fromTail = joined.byteLength - fromChunk;
          joined.set(tail.subarray(tail.byteLength - fromTail), 0);
          joined.set(chunk.subarray(chunk.byteLength - fromChunk), fromTail);
          tail = joined;
        }
        controller.enqueue(chunk);
      } catch (e) {
        error = e as AppError;
        throw e;
      }
    },
    flush() {
      try {
        if (!checked) runCheck();
      } catch (e) {
        error = e as AppError;
        throw e;
      }
    },
  });

  return {
    transform,
    /** The AppError this stage raised (limit, early type check), if any. */
    error: () => error,
    result: (): Inspection => ({ size, sha256: hex(hash.digest()), head: head.slice(0, headLen), tail }),
  };
}
