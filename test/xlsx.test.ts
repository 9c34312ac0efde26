import { describe, expect, test } from 'bun:test';
import { WorkbookWriter } from '@cj-tech-master/excelts/browser';
import { AppError } from '../src/core/errors.ts';
import type { CellValue } from '../src/core/cell-values.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { xlsxStream } from '../src/core/xlsx-write.ts';
import { EXPECTED, HEADER, ROWS } from './support/sheet-fixtures.ts';
import { bytesOf, declareSize, rowsOf, USER_HEADER, userRows, zipOf, zipParts } from './support/sheets.ts';

// The streaming XLSX writer (ExcelTS) and the import reader (read-excel-file behind our zip limits).

const write = (rows: CellValue[][], timeZone = 'Asia/Shanghai') => bytesOf(xlsxStream(HEADER, rowsOf(rows), { timeZone, sheetName: 'Users: all/any?' }));

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('xlsxStream', () => {
  test('reads back cell for cell: text, CJK, XML specials, numbers, dates in the zone, booleans, empties', async () => {
    const bytes = await write(ROWS);
    const back = await readSheet(bytes);
    // 1800 is before Excel's dates: written as text; LMT of Shanghai in 1800 is +8:05:43
    expect(back.map((r) => r.slice(0, HEADER.length))).toEqual(EXPECTED.map((r) => r.map((c) => c)));
  });

  test('text that looks like a formula is stored as text, never as a formula', async () => {
    const sheet = zipParts(await write(ROWS))['xl/worksheets/sheet1.xml']!;
    expect(sheet).not.toContain('<f>');
    expect(sheet).not.toContain('<f ');
    expect(sheet).toMatch(/<c r="B3" t="(str|inlineStr|s)"/);
  });

  test('the sheet name is made acceptable to Excel; header bold and frozen', async () => {
    const parts = zipParts(await write(ROWS));
    expect(parts['xl/workbook.xml']).toContain('name="Users_ all_any_"');
    expect(parts['xl/worksheets/sheet1.xml']).toContain('state="frozen"');
    expect(parts['xl/styles.xml']).toContain('<b/>');
  });

  test('an unknown time zone is a 400 before any byte', () => {
    expect(() => xlsxStream(HEADER, rowsOf([]), { timeZone: 'Mars/Olympus' })).toThrow(AppError);
  });

  test('no rows: a valid workbook with the header only', async () => {
    expect(await readSheet(await write([]))).toEqual([HEADER]);
  });

  test('rows are pulled only as the reader reads (backpressure), and cancel closes the source', async () => {
    const src = userRows(200_000);
    const reader = xlsxStream(USER_HEADER, src.rows).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    for (let i = 0; i < 10; i++) await new Promise((ok) => setTimeout(ok, 10));
    const pulledWhileIdle = src.pulled();
    // one 64 KiB queue of deflated output is a few thousand rows; never the 200,000
    expect(pulledWhileIdle).toBeGreaterThan(0);
    expect(pulledWhileIdle).toBeLessThan(20_000);
    await reader.cancel();
    expect(src.closed()).toBe(true);
    expect(src.pulled()).toBeLessThan(20_000);
  });

  test('an error in the rows errors the stream', async () => {
    async function* failing(): AsyncGenerator<CellValue[]> {
      yield [1, 'a'];
      throw new Error('cursor lost');
    }
    await expect(bytesOf(xlsxStream(['a', 'b'], failing()))).rejects.toThrow('cursor lost');
  });

  test('20,000 rows stream through and read back complete', async () => {
    const src = userRows(20_000);
    const back = await readSheet(await bytesOf(xlsxStream(USER_HEADER, src.rows)), { maxRows: 20_001 });
    expect(back).toHaveLength(20_001);
    expect(back[20_000]).toEqual(['20000', 'user19999', '用户 19999', 'user19999@example.com', '13800139999', 'enabled', '2024-01-14 21:19:00']);
  }, 60_000);
});

describe('readSheet limits and bad files', () => {
  test('larger than maxBytes: 413', async () => {
    const err = await refusal(readSheet(new Uint8Array(6 * 1024 * 1024)));
    expect(err.status).toBe(413);
  });

  test('not a zip, or an .xls / password-protected file: 400 saying which', async () => {
    expect((await refusal(readSheet(new TextEncoder().encode('id,name\n1,a')))).message).toContain('not an .xlsx');
    const ole = new Uint8Array(512);
    ole.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
    expect((await refusal(readSheet(ole))).message).toContain('.xls file or a password-protected');
    const truncated = (await write(ROWS)).slice(0, 2000);
    expect((await refusal(readSheet(truncated))).status).toBe(400);
  });

  test('zip bomb declaring its size: refused before anything is inflated', async () => {
    const parts = zipParts(await write(ROWS));
    const bomb = declareSize(zipOf(parts), 'xl/worksheets/sheet1.xml', 0xffff_fff0);
    expect((await refusal(readSheet(bomb))).message).toContain('unpacks to more than 32 MiB');
  });

  test('zip bomb hiding its size (declares 4 KiB, inflates to 64 MiB): output capped, 400, fast', async () => {
    const parts = zipParts(await write(ROWS));
    const sheet = parts['xl/worksheets/sheet1.xml']!;
    const pad = new Uint8Array(64 * 1024 * 1024).fill(0x20);
    const head = new TextEncoder().encode(sheet.replace('</sheetData>', ''));
    const big = new Uint8Array(head.length + pad.length);
    big.set(head);
    big.set(pad, head.length);
    const lying = declareSize(zipOf({ ...parts, 'xl/worksheets/sheet1.xml': big }, 9), 'xl/worksheets/sheet1.xml', 4096);
    expect(lying.byteLength).toBeLessThan(1024 * 1024);
    const t0 = performance.now();
    const err = await refusal(readSheet(lying));
    expect(err.status).toBe(400);
    expect(err.message).toContain('a part holds more than it declares');
    expect(performance.now() - t0).toBeLessThan(5000);
  }, 30_000);

  test('honest but too large unpacked, too many parts, rows or columns: 400 with the limit', async () => {
    const bytes = await write(ROWS);
    expect((await refusal(readSheet(bytes, { maxUncompressedBytes: 10_000 }))).message).toContain('unpacks to more than');
    expect((await refusal(readSheet(bytes, { maxRows: 5 }))).message).toContain('more than 5 rows');
    expect(await readSheet(bytes, { maxRows: 6 })).toHaveLength(6);
    expect((await refusal(readSheet(bytes, { maxColumns: 6 }))).message).toContain('more than 6 columns');
    const many = zipOf({ ...zipParts(bytes), ...Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`junk/${i}.bin`, 'x'])) });
    expect((await refusal(readSheet(many))).message).toContain('more than 1000 parts');
  });

  test('an entity-expansion ("billion laughs") sheet is not expanded', async () => {
    const parts = zipParts(await write([[1, 'a']]));
    const laughs = Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join('');
    parts['xl/worksheets/sheet1.xml'] = parts['xl/worksheets/sheet1.xml']!.replace('?>', `?><!DOCTYPE worksheet [<!ENTITY l0 "lol">${laughs}]>`).replace('<v>a</v>', '<v>&l9;</v>');
    const got = await readSheet(zipOf(parts)).then(
      (rows) => rows.flat().join('').length,
      (e: unknown) => (e instanceof AppError ? e.status : -1),
    );
    // either refused (400) or read with the reference left unexpanded: never 10^9 characters
    expect(got === 400 || (typeof got === 'number' && got < 1000)).toBe(true);
  });

  test('a workbook with shared strings (as Excel writes them) reads the same', async () => {
    const chunks: Uint8Array[] = [];
    const book = new WorkbookWriter({ stream: new WritableStream({ write: (c: Uint8Array) => void chunks.push(c) }), useSharedStrings: true, useStyles: true });
    const sheet = book.addWorksheet('S');
    sheet.addRow(['Login', 'Name']).commit();
    sheet.addRow(['alice', '爱丽丝']).commit();
    sheet.addRow(['bob', '爱丽丝']).commit();
    sheet.commit();
    await book.commit();
    const bytes = new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
    expect(Object.keys(zipParts(bytes))).toContain('xl/sharedStrings.xml');
    expect(await readSheet(bytes)).toEqual([
      ['Login', 'Name'],
      ['alice', '爱丽丝'],
      ['bob', '爱丽丝'],
    ]);
  });
});
