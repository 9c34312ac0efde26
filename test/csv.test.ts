import { describe, expect, test } from 'bun:test';
import { csvLines, csvStream, parseCsv } from '../src/core/csv.ts';
import type { CellValue } from '../src/core/cell-values.ts';
import { AppError } from '../src/core/errors.ts';
import { bytesOf, rowsOf, USER_HEADER, userRows } from './support/sheets.ts';

// CSV export (RFC 4180, BOM, formula injection defused) and import (quotes, line breaks, BOM,
// encodings, limits), both through Papa Parse.

const refusal = (f: () => unknown): AppError => {
  try {
    f();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('csv writer', () => {
  test('RFC 4180: quotes around separators, quotes (doubled), line breaks and edge spaces; CRLF line ends', () => {
    expect(csvLines([['plain', 'a,b', 'say "hi"', 'two\nlines', ' edge ', 'cr\rx']])).toBe('plain,"a,b","say ""hi""","two\nlines"," edge ","cr\rx"\r\n');
  });

  test('formula injection: text starting with = + - @ tab CR (or full-width = + - @) gets a quote prefix; numbers never', () => {
    const line = csvLines([['=1+1', '+SUM(A1)', '-2+3', '@cmd', '\tx', '＝1', 'a=b', -5, 3.5, true]]);
    expect(line).toBe(`"'=1+1","'+SUM(A1)","'-2+3","'@cmd","'\tx","'＝1",a=b,-5,3.5,true\r\n`);
  });

  test('values: null and undefined empty, NaN empty, dates as wall clock of the zone', () => {
    const row: CellValue[] = [null, undefined, Number.NaN, new Date('2024-01-02T03:04:05Z'), new Date(Number.NaN), 0];
    expect(csvLines([row], 'Asia/Shanghai')).toBe(',,,2024-01-02 11:04:05,,0\r\n');
    expect(csvLines([row])).toBe(',,,2024-01-02 03:04:05,,0\r\n');
  });

  test('the stream starts with a UTF-8 BOM (Excel reads Chinese right), then header and rows', async () => {
    const bytes = await bytesOf(csvStream(['名称', 'n'], rowsOf([['张三', 1]])));
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(new TextDecoder().decode(bytes)).toBe('名称,n\r\n张三,1\r\n');
    const plain = await bytesOf(csvStream(['a'], rowsOf([]), { bom: false }));
    expect(new TextDecoder().decode(plain)).toBe('a\r\n');
  });

  test('rows are pulled only as the reader reads, and cancel closes the source', async () => {
    const src = userRows(100_000);
    const reader = csvStream(USER_HEADER, src.rows).getReader();
    await reader.read();
    for (let i = 0; i < 5; i++) await new Promise((ok) => setTimeout(ok, 10));
    expect(src.pulled()).toBeGreaterThan(0);
    expect(src.pulled()).toBeLessThan(2000);
    await reader.cancel();
    expect(src.closed()).toBe(true);
  });

  test('an unknown time zone is a 400', () => {
    expect(refusal(() => csvStream(['a'], rowsOf([]), { timeZone: 'Nowhere/City' })).status).toBe(400);
  });
});

describe('csv reader', () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  test('reads back what the writer wrote, cell for cell (prefix kept: an imported "\'=x" stays "\'=x")', async () => {
    const rows: CellValue[][] = [
      ['a,b', 'say "hi"', 'two\r\nlines', ' edge ', '张三'],
      ['=1+1', '', 'x', '-', 'end'],
    ];
    const back = parseCsv(await bytesOf(csvStream(['c1', 'c2', 'c3', 'c4', 'c5'], rowsOf(rows))));
    expect(back).toEqual([['c1', 'c2', 'c3', 'c4', 'c5'], rows[0] as string[], ["'=1+1", '', 'x', "'-", 'end']]);
  });

  test('separators: comma, semicolon or tab, detected; a one-column file', () => {
    expect(parseCsv('a;b\n1;2')).toEqual([['a', 'b'], ['1', '2']]);
    expect(parseCsv('a\tb\n1\t2')).toEqual([['a', 'b'], ['1', '2']]);
    expect(parseCsv('login\nalice\nbob\n')).toEqual([['login'], ['alice'], ['bob']]);
  });

  test('encodings: UTF-8 with or without BOM, GB18030 (Chinese Excel), UTF-16LE with BOM', () => {
    expect(parseCsv(enc('\uFEFF名称\n张三'))).toEqual([['名称'], ['张三']]);
    expect(parseCsv(enc('名称\n张三'))).toEqual([['名称'], ['张三']]);
    // "张三,1" in GB18030
    expect(parseCsv(new Uint8Array([0xd5, 0xc5, 0xc8, 0xfd, 0x2c, 0x31]))).toEqual([['张三', '1']]);
    const utf16 = new Uint8Array([0xff, 0xfe, ...[...'a,张'].flatMap((c) => [c.charCodeAt(0) & 0xff, c.charCodeAt(0) >> 8])]);
    expect(parseCsv(utf16)).toEqual([['a', '张']]);
  });

  test('empty rows inside are kept (row numbers stay the file\'s), trailing ones dropped', () => {
    expect(parseCsv('a\n\nb\n\n\n')).toEqual([['a'], [''], ['b']]);
  });

  test('malformed quoting: 400 naming the row', () => {
    const err = refusal(() => parseCsv('a,b\n1,"unterminated\n2,3'));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^CSV row 2: /);
  });

  test('limits: bytes (413), rows and columns (400), checked while reading', () => {
    expect(refusal(() => parseCsv(new Uint8Array(6 * 1024 * 1024))).status).toBe(413);
    const three = 'h\n1\n2\n';
    expect(parseCsv(three, { maxRows: 3 })).toHaveLength(3);
    expect(refusal(() => parseCsv(three + '3', { maxRows: 3 })).message).toContain('more than 3 rows');
    // rows past the limit after empty lines still count
    expect(refusal(() => parseCsv('h\n1\n\n\n2', { maxRows: 3 })).message).toContain('more than 3 rows');
    expect(parseCsv('h\n1\n2\n\n\n\n', { maxRows: 3 })).toHaveLength(3);
    expect(refusal(() => parseCsv('a,b,c', { maxColumns: 2 })).message).toContain('more than 2 columns');
    // a million empty lines do not become a million arrays
    const t0 = performance.now();
    expect(parseCsv('h\n' + '\n'.repeat(1_000_000))).toEqual([['h']]);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });
});
