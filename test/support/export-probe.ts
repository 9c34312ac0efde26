// One pass over the export/import building blocks that gives a digest of everything they produced:
// run on Bun, Node, Deno and inside workerd, the digests must be equal (test/export-libs-runtimes).
// No runtime API here: web platform only, so the same file bundles into a Worker.
import { csvStream, parseCsv } from '../../src/core/csv.ts';
import { nextRun, cronError } from '../../src/core/cron.ts';
import { AppError } from '../../src/core/errors.ts';
import { sanitizeRichText } from '../../src/core/html-sanitize.ts';
import { planRun } from '../../src/core/misfire.ts';
import { readSheet } from '../../src/core/xlsx-read.ts';
import { xlsxStream } from '../../src/core/xlsx-write.ts';
import { EXPECTED, HEADER, ROWS } from './sheet-fixtures.ts';
import { bytesOf, declareSize, rowsOf, USER_HEADER, userRows, zipOf, zipParts } from './sheets.ts';

async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as BufferSource));
  return [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const statusOf = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e instanceof AppError ? e.status : `${(e as Error)?.name}: ${(e as Error)?.message}`),
  );

export async function probe(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  // .xlsx: the awkward cells, read back; 4,000 users (a sheet part over 512 KiB unpacked)
  const awkward = await bytesOf(xlsxStream(HEADER, rowsOf(ROWS), { timeZone: 'Asia/Shanghai' }));
  out.xlsxAwkwardReadsBack = JSON.stringify(await readSheet(awkward)) === JSON.stringify(EXPECTED);
  const users = await bytesOf(xlsxStream(USER_HEADER, userRows(4000).rows));
  out.xlsxUsersSheetBytes = zipParts(users)['xl/worksheets/sheet1.xml']!.length > 512 * 1024;
  out.xlsxUsers = await sha256(JSON.stringify(await readSheet(users)));
  // zip bomb hiding its size: refused (400), not inflated
  const parts = zipParts(awkward);
  const big = new Uint8Array(16 * 1024 * 1024).fill(0x20);
  out.xlsxLyingBomb = await statusOf(readSheet(declareSize(zipOf({ ...parts, 'xl/worksheets/sheet1.xml': big }, 9), 'xl/worksheets/sheet1.xml', 4096)));
  // CSV: bytes, and read back
  const csv = await bytesOf(csvStream(HEADER, rowsOf(ROWS.map((r) => r.slice(0, 4))), { timeZone: 'Asia/Shanghai' }));
  out.csv = await sha256(csv);
  out.csvBack = await sha256(JSON.stringify(parseCsv(csv)));
  out.csvGb18030 = JSON.stringify(parseCsv(new Uint8Array([0xd5, 0xc5, 0xc8, 0xfd, 0x2c, 0x31])));
  // HTML
  out.html = [
    '<p onclick="x()">hi<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">a</a></p>',
    '<p style="color: red; background: url(//evil)"><img src="/app/i?id=1&x=2" alt="a"><a href="https://e.example" target="_blank">l</a></p>',
    '<svg><style><img src=x onerror=alert(1)></style></svg><math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  ].map(sanitizeRichText);
  // cron, in zones (the runtime's Intl data)
  out.cron = [
    nextRun('0 3 * * *', new Date('2024-01-01T00:00:00Z'), 'Asia/Shanghai'),
    nextRun('30 2 * * *', new Date('2024-03-30T12:00:00Z'), 'Europe/Berlin'),
    nextRun('30 2 * * *', new Date('2024-10-26T12:00:00Z'), 'America/New_York'),
    nextRun('0 9 * * MON-FRI', new Date('2024-01-05T10:00:00Z')),
  ].map((d) => d?.toISOString());
  out.cronError = cronError('* * 32 * *');
  out.plan = planRun({ expr: '0 * * * *', lastRunAt: new Date('2024-01-01T00:00:05Z'), now: new Date('2024-01-01T05:10:00Z'), policy: 'fire' });
  return JSON.parse(JSON.stringify(out)) as Record<string, unknown>;
}
