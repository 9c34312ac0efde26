import Papa from 'papaparse';
import { assertTimeZone, FORMULA_TRIGGER, formatDateTime, isValidDate, type CellValue } from './cell-values.ts';
import { AppError, badRequest } from './errors.ts';

/**
 * CSV for exports and imports, with Papa Parse doing the RFC 4180 work both ways (quoting of
 * separators, quotes, line breaks and edge spaces; quoted fields across lines when reading).
 *
 * Writing: UTF-8 with a BOM (without it Excel reads UTF-8 as the local code page and Chinese text
 * comes out garbled), CRLF line ends, and formula injection defused the way OWASP describes:
 * a TEXT value starting with = + - @, tab or CR (or a full-width = + - @) gets a leading `'` and
 * quotes, so a spreadsheet shows it as text. Numbers and booleans are never prefixed (-5 stays a
 * number). The prefix is visible in the file; the reader does not strip it (an imported `'=x`
 * stays `'=x`).
 */

export interface CsvOptions {
  /** IANA zone whose wall clock Date values show, as `YYYY-MM-DD HH:mm:ss`; default UTC. */
  timeZone?: string;
  /** Start with a UTF-8 byte order mark (default true). */
  bom?: boolean;
}

const UNPARSE: Papa.UnparseConfig = { newline: '\r\n', escapeFormulae: FORMULA_TRIGGER, header: false };
/** Rows turned into text per chunk of output. */
const ROWS_PER_CHUNK = 256;

function fieldOf(v: CellValue, timeZone: string): string | number | boolean {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? v : '';
  if (typeof v === 'boolean') return v;
  if (v instanceof Date) return isValidDate(v) ? formatDateTime(v, timeZone) : '';
  return String(v);
}

/** One or more records as CSV text, each ended by CRLF. */
export function csvLines(rows: readonly (readonly CellValue[])[], timeZone = 'UTC'): string {
  if (!rows.length) return '';
  return Papa.unparse(rows.map((r) => r.map((v) => fieldOf(v, timeZone))), UNPARSE) + '\r\n';
}

/**
 * `header` then every row of `rows` as a CSV byte stream. A chunk of rows is read only when the
 * reader asks for more; cancelling the stream ends `rows` through its `return()`.
 */
export function csvStream(header: readonly string[], rows: AsyncIterable<readonly CellValue[]>, options: CsvOptions = {}): ReadableStream<Uint8Array> {
  const timeZone = options.timeZone ?? 'UTC';
  assertTimeZone(timeZone); // a 400 before any byte
  const source = rows[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  let head: string | undefined = (options.bom === false ? '' : '\uFEFF') + csvLines([header]);
  return new ReadableStream<Uint8Array>({
    async pull(out) {
      const batch: (readonly CellValue[])[] = [];
      let done = false;
      while (batch.length < ROWS_PER_CHUNK) {
        const next = await source.next();
        if (next.done) {
          done = true;
          break;
        }
        batch.push(next.value);
      }
      const text = (head ?? '') + csvLines(batch, timeZone);
      head = undefined;
      if (text) out.enqueue(encoder.encode(text));
      if (done) out.close();
    },
    async cancel() {
      await source.return?.();
    },
  });
}

export interface CsvLimits {
  maxBytes: number;
  /** Rows, the header row included. */
  maxRows: number;
  maxColumns: number;
}

export const CSV_LIMITS: CsvLimits = { maxBytes: 5 * 1024 * 1024, maxRows: 10_001, maxColumns: 200 };

/**
 * The text of an uploaded CSV: UTF-8 (a BOM is dropped); UTF-16 when it starts with a UTF-16 BOM
 * (Excel's "Unicode text"); otherwise GB18030, which is what Excel on a Chinese Windows saves as
 * "CSV (comma delimited)".
 */
function decode(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    try {
      return new TextDecoder('gb18030', { fatal: true }).decode(body);
    } catch {
      throw badRequest('The CSV file is neither UTF-8 nor GB18030 text: save it as "CSV UTF-8"');
    }
  }
}

/**
 * An uploaded CSV as rows of text (comma, semicolon or tab separated, detected from the first
 * lines), trailing empty rows dropped; or a 4xx AppError: too large (413), undecodable, malformed
 * quoting, too many rows or columns (400).
 */
export function parseCsv(input: Uint8Array | string, limits: Partial<CsvLimits> = {}): string[][] {
  const lim = { ...CSV_LIMITS, ...limits };
  const size = typeof input === 'string' ? input.length : input.byteLength;
  if (size > lim.maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${(lim.maxBytes / 1024 / 1024).toFixed(0)} MiB`);
  let text = typeof input === 'string' ? input : decode(input);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // Step by step, so a file of millions of lines stops at the limit instead of becoming millions of
  // arrays. Empty rows are counted, and kept only when a non-empty row follows them.
  const rows: string[][] = [];
  let empties = 0;
  let refusal: AppError | undefined;
  Papa.parse<string[]>(text, {
    delimitersToGuess: [',', ';', '\t'],
    skipEmptyLines: false,
    dynamicTyping: false,
    step(result, parser) {
      const error = result.errors.find((e) => e.code !== 'UndetectableDelimiter');
      const line = rows.length + empties + 1;
      if (error) refusal = badRequest(`CSV row ${line}: ${error.message}`);
      else if (result.data.length > lim.maxColumns) refusal = badRequest(`The file has more than ${lim.maxColumns} columns`);
      else if (result.data.every((c) => c === '')) empties++;
      else if (line > lim.maxRows) refusal = badRequest(`The file has more than ${lim.maxRows} rows (header included)`);
      else {
        for (; empties > 0; empties--) rows.push(['']);
        rows.push(result.data);
      }
      if (refusal) parser.abort();
    },
  });
  if (refusal) throw refusal;
  return rows;
}
