// Bench-only Worker (bench/export.ts): GET /?format=xlsx|csv&rows=N streams a users-like export
// of N made-up rows, produced as the response body is read.
import { csvStream } from '../src/core/csv.ts';
import { xlsxStream } from '../src/core/xlsx-write.ts';
import { USER_HEADER, userRows } from '../test/support/sheets.ts';

export default {
  fetch(request: Request): Response {
    const url = new URL(request.url);
    const rows = Number(url.searchParams.get('rows') ?? 1000);
    const format = url.searchParams.get('format') === 'csv' ? 'csv' : 'xlsx';
    const body = (format === 'csv' ? csvStream : xlsxStream)(USER_HEADER, userRows(rows).rows, { timeZone: 'Asia/Shanghai' });
    return new Response(body, { headers: { 'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' } });
  },
};
