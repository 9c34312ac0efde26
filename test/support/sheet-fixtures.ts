import type { CellValue } from '../../src/core/cell-values.ts';
import { XLSX_MAX_CELL_CHARS } from '../../src/core/xlsx-write.ts';

// One table of awkward cells for the .xlsx tests: written with the zone Asia/Shanghai (UTC+8),
// EXPECTED is what reading it back gives. 1800 is before Excel's dates, so it is written as
// text; Shanghai's local mean time in 1800 was UTC+8:05:43.
export const HEADER = ['ID', '名称 Name', 'Note', 'Amount', 'When', 'Flag', 'Empty'];
const long = 'x'.repeat(40_000);
export const ROWS: CellValue[][] = [
  [1, '张三 😀', `<b>&amp;</b> "q" 's ]]>`, -12.5, new Date('2024-01-02T03:04:05Z'), true, null],
  [2, '=1+1', '+SUM(A1:A2)', '-2', new Date(Number.NaN), false, ''],
  [3, '@cmd|/c calc', '\tTab', Number.NaN, new Date('1800-05-06T07:08:09Z'), Number.POSITIVE_INFINITY, undefined],
  [4, 'a\u0001b\u0000c\uD800d', 'line1\nline2', 1e21, new Date('2024-07-01T16:00:00Z'), null, 0],
  [5, long, ' padded ', 0.1, null, null, 'lit _x0041_ _x005F_'],
];
/** What reading the workbook back gives (time zone Asia/Shanghai, UTC+8). */
export const EXPECTED = [
  HEADER,
  ['1', '张三 😀', `<b>&amp;</b> "q" 's ]]>`, '-12.5', '2024-01-02 11:04:05', 'true', ''],
  ['2', '=1+1', '+SUM(A1:A2)', '-2', '', 'false', ''],
  ['3', '@cmd|/c calc', '\tTab', '', '1800-05-06 15:13:52', '', ''],
  ['4', 'a\uFFFDb\uFFFDc\uFFFDd', 'line1\nline2', '1e+21', '2024-07-02', '', '0'],
  ['5', long.slice(0, XLSX_MAX_CELL_CHARS), ' padded ', '0.1', '', '', 'lit _x0041_ _x005F_'],
];

