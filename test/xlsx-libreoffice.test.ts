import { afterAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCsv } from '../src/core/csv.ts';
import { xlsxStream } from '../src/core/xlsx-write.ts';
import { bytesOf, rowsOf } from './support/sheets.ts';
import { scratchDir } from './support/tmp-root.ts';
import { EXPECTED, HEADER, ROWS } from './support/sheet-fixtures.ts';

// A second, independent reader of our .xlsx: LibreOffice (Debian's libreoffice-calc-nogui, which
// .ci/run installs) converts it to CSV, and every cell must come back as written. Where the
// package is missing the test is skipped with the reason in its name.
const SOFFICE = ['/usr/bin/soffice', '/usr/bin/libreoffice'].find((p) => existsSync(p));
const dir = scratchDir('xlsx-lo');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How LibreOffice's "as shown" text differs from our reader's, by design: General-format numbers and the full date format. */
function asShown(cell: string, col: number): string {
  if (cell === '1e+21') return '1E+021';
  if (col === 4 && /^\d{4}-\d\d-\d\d$/.test(cell)) return `${cell} 00:00:00`;
  if (col === 5 && (cell === 'true' || cell === 'false')) return cell.toUpperCase();
  return cell;
}

describe.skipIf(!SOFFICE)(SOFFICE ? 'LibreOffice reads our .xlsx' : 'LibreOffice reads our .xlsx (skipped: no /usr/bin/soffice; apt-get install libreoffice-calc-nogui)', () => {
  test('converted to CSV, every cell is what was written', async () => {
    const file = join(dir, 'export.xlsx');
    writeFileSync(file, await bytesOf(xlsxStream(HEADER, rowsOf(ROWS), { timeZone: 'Asia/Shanghai' })));
    const r = spawnSync(
      SOFFICE!,
      // 44 = comma, 34 = ", 76 = UTF-8, from line 1, cells as shown (dates in the cell's format)
      [`-env:UserInstallation=file://${join(dir, 'profile')}`, '--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false', '--outdir', dir, file],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const back = parseCsv(readFileSync(join(dir, 'export.csv')));
    // formula-looking text stays text (a formula would show its result, 2)
    expect(back[2]![1]).toBe('=1+1');
    expect(back).toEqual(EXPECTED.map((row) => row.map(asShown)));
  }, 180_000);
});
