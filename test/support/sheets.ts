import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import type { CellValue } from '../../src/core/cell-values.ts';

/** Every byte of a stream, joined. */
export async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** An async iterable over `rows`, yielding to the event loop now and then like a database cursor. */
export async function* rowsOf<T>(rows: Iterable<T>): AsyncGenerator<T> {
  let i = 0;
  for (const r of rows) {
    if (++i % 500 === 0) await new Promise((ok) => setTimeout(ok, 0));
    yield r;
  }
}

/**
 * `count` users-like rows made on the fly, counting how many were pulled (`pulled()`) and whether
 * the generator was closed early (`closed()`).
 */
export function userRows(count: number) {
  let pulled = 0;
  let closed = false;
  async function* gen(): AsyncGenerator<CellValue[]> {
    try {
      for (let i = 0; i < count; i++) {
        if (i % 1000 === 0) await null;
        pulled++;
        yield [i + 1, `user${i}`, `用户 ${i}`, `user${i}@example.com`, `1380013${String(i % 10000).padStart(4, '0')}`, i % 3 ? 'enabled' : 'disabled', new Date(Date.UTC(2024, 0, 1) + i * 60_000)];
      }
    } finally {
      closed = true;
    }
  }
  return { rows: gen(), pulled: () => pulled, closed: () => closed };
}

export const USER_HEADER = ['ID', 'Login name', 'Name', 'Email', 'Phone', 'Status', 'Created at'];

/** The parts of a zip, as text. */
export function zipParts(bytes: Uint8Array): Record<string, string> {
  return Object.fromEntries(Object.entries(unzipSync(bytes)).map(([k, v]) => [k, strFromU8(v)]));
}

/** A zip of text parts (test fixtures built from a real workbook's parts, some changed). */
export function zipOf(parts: Record<string, string | Uint8Array>, level: 0 | 6 | 9 = 6): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, typeof v === 'string' ? strToU8(v) : v])), { level });
}

/**
 * Rewrites the uncompressed size a zip declares for `name`, in its local header and its central
 * directory (a lying archive). Only for archives without data descriptors (fflate's zipSync).
 */
export function declareSize(zip: Uint8Array, name: string, size: number): Uint8Array {
  const out = zip.slice();
  const dv = new DataView(out.buffer);
  const target = strToU8(name);
  const nameAt = (at: number, len: number) => len === target.length && target.every((b, i) => out[at + i] === b);
  for (let i = 0; i + 46 < out.length; i++) {
    const sig = dv.getUint32(i, true);
    if (sig === 0x04034b50 && nameAt(i + 30, dv.getUint16(i + 26, true))) dv.setUint32(i + 22, size, true);
    if (sig === 0x02014b50 && nameAt(i + 46, dv.getUint16(i + 28, true))) dv.setUint32(i + 24, size, true);
  }
  return out;
}
