import { WorkbookWriter } from '@cj-tech-master/excelts/browser';
import { assertTimeZone, isValidDate, wallClock, type CellValue } from './cell-values.ts';

/**
 * A streaming .xlsx writer: rows are written as they arrive and leave as deflated zip bytes, so a
 * 1M-row export holds a few rows and one deflate window, never the sheet. The SpreadsheetML and
 * the zip are written by ExcelTS's WorkbookWriter (the browser build, the same code on Bun, Node,
 * Deno and workerd); this file only maps our cell values and bridges its Web WritableStream sink
 * to a pull-driven ReadableStream.
 *
 * Text is always a text cell (never a formula: a value starting with `=` stays the string `=…`),
 * so formula injection needs no prefix here, unlike CSV. What SpreadsheetML cannot hold is mapped:
 * control characters and lone surrogates become U+FFFD, text over Excel's 32,767-character cell
 * limit is cut, NaN/±Infinity and invalid Dates become empty cells, and Dates become the wall
 * clock of `timeZone` (a cell has no zone) with a `yyyy-mm-dd hh:mm:ss` format.
 */

export interface XlsxOptions {
  /** Worksheet name (Excel: at most 31 characters, none of []:*?/\); default `Sheet1`. */
  sheetName?: string;
  /** IANA zone whose wall clock Date cells show; default UTC. */
  timeZone?: string;
}

/** Excel's limit on the characters of one cell. */
export const XLSX_MAX_CELL_CHARS = 32_767;
const DATE_FORMAT = 'yyyy-mm-dd hh:mm:ss';
/** Stop producing while this much output waits unread. */
const HIGH_WATER_BYTES = 64 * 1024;
/** Characters XML 1.0 cannot carry (C0 controls but tab/LF/CR, U+FFFE/U+FFFF, lone surrogates). */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text as a cell can hold it: XML-safe characters, at most XLSX_MAX_CELL_CHARS. */
export function xlsxText(s: string): string {
  let t = s.replace(NOT_XML, '\uFFFD');
  if (t.length > XLSX_MAX_CELL_CHARS) {
    t = t.slice(0, XLSX_MAX_CELL_CHARS);
    // never end on the first half of a surrogate pair
    if (/[\uD800-\uDBFF]$/.test(t)) t = t.slice(0, -1);
  }
  return t;
}

type Written = string | number | boolean | Date | null;

function cellOf(v: CellValue, timeZone: string): Written {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'boolean') return v;
  if (v instanceof Date) {
    if (!isValidDate(v)) return null;
    const wall = wallClock(v, timeZone);
    const year = wall.getUTCFullYear();
    // Excel's dates start at 1900 and end at 9999: outside, the text of the time
    if (year < 1900 || year > 9999) return wall.toISOString().slice(0, 19).replace('T', ' ');
    return wall;
  }
  return xlsxText(String(v));
}

/**
 * Text goes in as a one-run rich text, which ExcelTS writes as an inline string
 * (`t="inlineStr"`, `<t xml:space="preserve">` when it starts or ends with a space, `_xHHHH_`
 * escaped): a plain string would become a `t="str"` cell (a formula's cached text), whose edge
 * spaces LibreOffice drops.
 */
const asCell = (w: Written) => (typeof w === 'string' ? { richText: [{ text: w }] } : w);

/** Excel refuses a sheet name over 31 characters or holding []:*?/\, or an empty one. */
function sheetNameOf(name: string | undefined): string {
  const clean = (name ?? '').replace(/[[\]:*?/\\]/g, '_').replace(NOT_XML, '_').replace(/^'+|'+$/g, '').slice(0, 31);
  return clean.trim() ? clean : 'Sheet1';
}

/** Display width of a header: CJK and other wide characters count double. */
function widthOf(text: string): number {
  let w = 0;
  for (const ch of text) w += /[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]|[\u{20000}-\u{3FFFD}]/u.test(ch) ? 2 : 1;
  return Math.min(60, Math.max(10, w + 2));
}

/**
 * The workbook as a byte stream: `header` in bold on a frozen first row, then every row of `rows`
 * in order. Rows are pulled from `rows` only while the reader keeps up (at most ~64 KiB of output
 * waits unread); cancelling the stream ends `rows` through its `return()`. An error thrown by
 * `rows` errors the stream (the file is then truncated: a response that already started cannot
 * change its status).
 */
export function xlsxStream(header: readonly string[], rows: AsyncIterable<readonly CellValue[]>, options: XlsxOptions = {}): ReadableStream<Uint8Array> {
  const timeZone = options.timeZone ?? 'UTC';
  assertTimeZone(timeZone); // a 400 before any byte
  const source = rows[Symbol.asyncIterator]();
  let out!: ReadableStreamDefaultController<Uint8Array>;
  let wake: (() => void) | undefined;
  let started = false;
  let cancelled = false;

  const produce = async () => {
    const sink = new WritableStream<Uint8Array>({
      write(chunk) {
        if (!cancelled) out.enqueue(chunk);
      },
      close() {
        if (!cancelled) out.close();
      },
    });
    const book = new WorkbookWriter({ stream: sink, useSharedStrings: false, useStyles: true });
    const sheet = book.addWorksheet(sheetNameOf(options.sheetName), { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = header.map((h) => ({ width: widthOf(h) }));
    const head = sheet.addRow(header.map((h) => asCell(xlsxText(String(h)))));
    head.font = { bold: true };
    head.commit();
    for (;;) {
      const next = await source.next();
      if (cancelled) return;
      if (next.done) break;
      const row = sheet.addRow(next.value.map((v) => asCell(cellOf(v, timeZone))));
      next.value.forEach((v, i) => {
        if (v instanceof Date) row.getCell(i + 1).numFmt = DATE_FORMAT;
      });
      row.commit();
      if ((out.desiredSize ?? 1) <= 0) await new Promise<void>((ok) => (wake = ok));
      if (cancelled) return;
    }
    sheet.commit();
    await book.commit();
  };

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        out = c;
      },
      pull() {
        if (!started) {
          started = true;
          produce().catch((err) => {
            if (!cancelled) out.error(err);
          });
        }
        wake?.();
        wake = undefined;
      },
      async cancel() {
        cancelled = true;
        wake?.();
        await source.return?.();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: HIGH_WATER_BYTES }),
  );
}
