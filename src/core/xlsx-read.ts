import { Unzip, UnzipInflate, unzipSync, zipSync } from 'fflate';
import { readSheet as readFirstSheet } from 'read-excel-file/universal';
import { AppError, badRequest } from './errors.ts';

/**
 * Reads the first worksheet of an uploaded .xlsx (an import: a user list of some thousands of
 * rows) into rows of text, within limits. The workbook is parsed by read-excel-file (its
 * universal build). The zip is opened first, by fflate's streaming Unzip under our limits, and
 * handed over re-packed without compression:
 * - zip bombs: every part is inflated a few KiB of input at a time and the work stops as soon
 *   as the parts together pass maxUncompressedBytes, or a part passes the size it declares; so
 *   neither memory nor CPU follows what the deflate streams really hold;
 * - no second reading: read-excel-file parses exactly the bytes that were counted (and the
 *   central directory must agree with them), never the original archive;
 * - workerd: read-excel-file inflates parts over 512 KiB on a Web Worker (fflate's async unzip),
 *   which workerd does not have; stored parts are only copied.
 */

export interface SheetLimits {
  /** Size of the uploaded file. */
  maxBytes: number;
  /** Rows, the header row included. */
  maxRows: number;
  maxColumns: number;
  /** Sum of the declared sizes of the parts read (sheet XML, shared strings, styles, …). */
  maxUncompressedBytes: number;
  /** Entries in the zip. */
  maxEntries: number;
}

const MiB = 1024 * 1024;
export const SHEET_LIMITS: SheetLimits = { maxBytes: 5 * MiB, maxRows: 10_001, maxColumns: 200, maxUncompressedBytes: 32 * MiB, maxEntries: 1000 };

/** The parts read-excel-file reads (it ignores media, printer settings, …): the same rule. */
const wanted = (name: string) => name.endsWith('.xml') || name.endsWith('.xml.rels');

/** Compressed bytes handed to the inflater at a time: one push can at most inflate ~1,000 times this. */
const PUSH_BYTES = 4096;

function unpack(bytes: Uint8Array, limits: SheetLimits): Record<string, Uint8Array> {
  const tooBig = () => badRequest(`The workbook unpacks to more than ${Math.round(limits.maxUncompressedBytes / MiB)} MiB: split it into smaller files`);
  const unreadable = () => badRequest('The file is not a valid .xlsx workbook (its zip cannot be read)');
  // The central directory: what the parts are and the sizes they declare (nothing inflated).
  const listed: { name: string; size: number }[] = [];
  try {
    unzipSync(bytes, {
      filter(file) {
        if (listed.length >= limits.maxEntries) throw badRequest(`The workbook holds more than ${limits.maxEntries} parts`);
        listed.push({ name: file.name, size: file.originalSize });
        return false;
      },
    });
  } catch (err) {
    throw err instanceof AppError ? err : unreadable();
  }
  const files: Record<string, Uint8Array> = {};
  let total = 0;
  let refusal: AppError | undefined;
  const unzipper = new Unzip((file) => {
    if (refusal || !wanted(file.name)) return;
    const declared = file.originalSize;
    if (declared !== undefined && total + declared > limits.maxUncompressedBytes) return void (refusal = tooBig());
    const chunks: Uint8Array[] = [];
    let size = 0;
    file.ondata = (err, chunk, final) => {
      if (refusal) return;
      if (err) return void (refusal = unreadable());
      size += chunk.length;
      total += chunk.length;
      if (total > limits.maxUncompressedBytes) refusal = tooBig();
      else if (declared !== undefined && size > declared) refusal = badRequest('The workbook is damaged: a part holds more than it declares');
      if (refusal) return file.terminate();
      chunks.push(chunk);
      if (final) files[file.name] = chunks.length === 1 ? chunks[0]! : concat(chunks, size);
    };
    file.start();
  });
  unzipper.register(UnzipInflate);
  try {
    for (let at = 0; at < bytes.length && !refusal; at += PUSH_BYTES) unzipper.push(bytes.subarray(at, at + PUSH_BYTES), at + PUSH_BYTES >= bytes.length);
  } catch {
    refusal ??= unreadable();
  }
  if (refusal) throw refusal;
  // what was read must be what the central directory lists (a reader going by it sees the same)
  for (const { name, size } of listed) if (wanted(name) && files[name]?.length !== size) throw unreadable();
  return files;
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) (out.set(c, at), (at += c.length));
  return out;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A cell as text: numbers as the workbook stores them, dates as `YYYY-MM-DD[ HH:mm:ss]`. */
function textOf(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) {
    const t = Math.round(v.getTime() / 1000) * 1000;
    if (Number.isNaN(t)) return '';
    const d = new Date(t);
    const day = `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    return t % 86_400_000 === 0 ? day : `${day} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  }
  return String(v);
}

/**
 * The first worksheet as rows of text (empty cells as '', trailing empty rows dropped), or a 4xx
 * AppError saying what is wrong with the file: too large (413), not an .xlsx, a part too large
 * unpacked, too many rows or columns, or a sheet it cannot read (400).
 */
export async function readSheet(bytes: Uint8Array, limits: Partial<SheetLimits> = {}): Promise<string[][]> {
  const lim = { ...SHEET_LIMITS, ...limits };
  if (bytes.byteLength > lim.maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${(lim.maxBytes / MiB).toFixed(0)} MiB`);
  if (bytes.byteLength < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b || bytes[2] !== 0x03 || bytes[3] !== 0x04) {
    const ole = bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0;
    throw badRequest(ole ? 'This is an .xls file or a password-protected workbook: save it as an .xlsx without a password' : 'The file is not an .xlsx workbook');
  }
  const parts = unpack(bytes, lim);
  const stored = zipSync(parts, { level: 0 });
  let data: unknown[][];
  try {
    data = (await readFirstSheet(stored.buffer as ArrayBuffer, { trim: false, parseNumber: (s: string) => s })) as unknown[][];
  } catch (err) {
    const why = err instanceof Error && err.name === 'InvalidSpreadsheetError' ? `: ${err.message}` : '';
    throw badRequest(`The workbook cannot be read${why}`.slice(0, 300));
  }
  const rows = data.map((r) => r.map(textOf));
  while (rows.length && rows[rows.length - 1]!.every((c) => c === '')) rows.pop();
  if (rows.length > lim.maxRows) throw badRequest(`The sheet has more than ${lim.maxRows} rows (header included)`);
  const widest = rows.reduce((n, r) => Math.max(n, r.length), 0);
  if (widest > lim.maxColumns) throw badRequest(`The sheet has more than ${lim.maxColumns} columns`);
  return rows;
}
