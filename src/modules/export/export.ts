import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { scopeAll } from '../../access/data-scope.ts';
import type { ScopeFilter } from '../../access/scoped-page.ts';
import type { CellValue } from '../../core/cell-values.ts';
import { errorFields } from '../../core/log.ts';
import { csvStream } from '../../core/csv.ts';
import type { PermissionCode } from '../../core/permissions.ts';
import { MAX_BOUND_PARAMS } from '../../core/ports.ts';
import { xlsxStream } from '../../core/xlsx-write.ts';
import { qb } from '../../db/compile.ts';
import type { Stmt } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { guarded } from '../../http/guard.ts';
import { jsonBody } from '../../http/router.ts';
import { contentDisposition } from '../files/index.ts';

/*
 * The export of every list page (contract: "Standard modules", Export): the rows the page selects
 * for the same `params` (data scope included), every page of them, as a streamed XLSX or CSV file.
 *
 * A module hands exportAnswer() a plan: the page's FROM and WHERE for the params (its own filter
 * function, the one its page uses), the page's data scope, the columns to read and how each
 * becomes a cell. The rows are read in keyset chunks of EXPORT_CHUNK, newest first (`id < last`,
 * or `(key, id) < last` for a page keyed by another column), each chunk a statement of its own
 * with the page's filters plus one or two cursor values: never OFFSET (a deep offset rereads every
 * row before it), never a bound list (the scope is SQL on the caller's id), and never more than a
 * chunk's rows in one D1 result. The first chunk goes out with the caller's auth statement and the
 * dictionary labels (one round trip on D1): the caller is judged before any row leaves, and a 401
 * or 403 is an envelope, not a broken file. The next chunks are read only as the client takes the
 * bytes (the writers pull), so memory stays at about one chunk and one deflate window.
 */

export const EXPORT_FORMATS = ['xlsx', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** Rows per keyset read. A row of the widest list (op log: params up to 2 KiB) keeps a chunk near 3 MB. */
export const EXPORT_CHUNK = 1000;

export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const CSV_TYPE = 'text/csv; charset=utf-8';

/** `{params, format}`: the page's params (same names, same rules) and the file format. */
export function exportRequestSchema<P extends z.ZodType>(name: string, params: P) {
  return z
    .strictObject({
      params: (params as unknown as z.ZodObject).default({} as never) as unknown as z.ZodDefault<P>,
      format: z.enum(EXPORT_FORMATS).default('xlsx').openapi({ description: '`xlsx` (default) or `csv` (UTF-8 with a BOM, CRLF)' }),
    })
    .openapi(name);
}

const binary = z.string().openapi({ type: 'string', format: 'binary' });

/** An export route's declaration: POST `<base>/export`, the module's `…:export` code, op-logged. */
export function exportRoute<B extends string, P extends z.ZodType>(code: PermissionCode, base: B, tags: string[], noun: string, request: ReturnType<typeof exportRequestSchema<P>>) {
  return guarded(
    code,
    createRoute({
      method: 'post',
      path: `${base}/export` as `${B}/export`,
      tags,
      summary: `Export the ${noun} the page selects for these params (XLSX or CSV, every page, streamed)`,
      description:
        'The rows `page` would return for the same `params` (data scope included), every page of them, newest first, as a download ' +
        '(`Content-Disposition: attachment` with an RFC 5987 `filename*`); dictionary-backed values as their labels; times in UTC. ' +
        'Not an envelope on success. Text cells are never formulas: in CSV a value starting with = + - @ (or tab, CR) gets a leading `\'`.',
      request: { body: jsonBody(request) },
      responses: {
        200: {
          description: 'The file (not an envelope)',
          headers: { 'Content-Disposition': { schema: { type: 'string' }, description: 'attachment; filename="…"; filename*=UTF-8\'\'…' } },
          content: { [XLSX_TYPE]: { schema: binary }, 'text/csv': { schema: binary } },
        },
      },
    }),
    { oplog: true },
  );
}

/** One column of an export: its header, its cell, and the dictionary whose label replaces the value. */
export interface ExportColumn<Row> {
  header: string;
  value: (row: Row) => CellValue;
  /** A dictionary type code: the cell shows the label of the item whose value it holds (the value when none). */
  dict?: string;
}

export interface ExportPlan<Row> {
  /** File name stem (`users` → `users-20261127-153000.xlsx`) and sheet name. */
  name: string;
  /** The page's FROM and WHERE for the params, without data scope. */
  rows: SelectQueryBuilder<any, any, any>;
  /** The page's data scope (none: the rows have no owner). */
  scope?: ScopeFilter;
  /** The columns to read. */
  select: (q: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, Row>;
  /** Keyset columns, newest first: the id column, or a sort column and the id column (unique together, never NULL). */
  keys: readonly [string] | readonly [string, string];
  columns: readonly ExportColumn<Row>[];
}

type Cursor = readonly unknown[];

/** `(k0, k1) < cursor`, spelled out (an index on the keys serves it). */
function after(keys: readonly string[], cursor: Cursor): RawBuilder<boolean> {
  const [k0, k1] = keys.map((k) => sql.ref(k));
  if (k1 === undefined) return sql<boolean>`${k0} < ${cursor[0]}`;
  return sql<boolean>`(${k0} < ${cursor[0]} OR (${k0} = ${cursor[0]} AND ${k1} < ${cursor[1]}))`;
}

/** One chunk's statement: the page's rows in scope after `cursor`, newest first, at most EXPORT_CHUNK. */
export function chunkStatement<Row>(plan: ExportPlan<Row>, scope: RawBuilder<boolean> | undefined, cursor: Cursor | undefined, limit = EXPORT_CHUNK): Stmt {
  let q = plan.rows;
  if (cursor) q = q.where(after(plan.keys, cursor));
  // The scope last: an AND chain nests leftwards, and D1 refuses expressions deeper than 100.
  if (scope) q = q.where(scope);
  let s = plan.select(q) as SelectQueryBuilder<any, any, any>;
  s = s.select(plan.keys.map((k, i) => sql.ref(k).as(`__k${i}`)));
  for (const k of plan.keys) s = s.orderBy(sql.ref(k), 'desc');
  const compiled = s.limit(limit).compile();
  if (compiled.parameters.length > MAX_BOUND_PARAMS) throw new Error(`export chunk binds ${compiled.parameters.length} values (D1 allows ${MAX_BOUND_PARAMS})`);
  return compiled;
}

/** The labels of the dictionaries `codes`, enabled items last so that their label wins. */
function labelsStatement(codes: readonly string[]): Stmt {
  return qb
    .selectFrom('dict_data')
    .select(['type_code', 'value', 'label'])
    .where('type_code', 'in', sql<string>`(SELECT value FROM json_each(${JSON.stringify(codes)}))`)
    .orderBy(sql`status = 'enabled'`)
    .orderBy('id')
    .compile();
}

type Labels = Map<string, Map<string, string>>;

function labelsOf(rows: readonly unknown[]): Labels {
  const out: Labels = new Map();
  for (const r of rows as { type_code: string; value: string; label: string }[]) {
    let m = out.get(r.type_code);
    if (!m) out.set(r.type_code, (m = new Map()));
    m.set(r.value, r.label);
  }
  return out;
}

/** The caller's data scope for every chunk: none for a known super admin, else SQL on their id (`all`, or the narrower scope). */
function scopeOf(run: Runner, filter: ScopeFilter | undefined): RawBuilder<boolean> | undefined {
  if (!filter || run.knownSuper) return undefined;
  return sql<boolean>`(${scopeAll(run.userId)} OR ${filter('sql', run.userId)})`;
}

/**
 * Every row of the plan, as cells: the first chunk already read (with the caller's judgement),
 * then chunk after chunk while the last one was full. Ends early when the client goes away (the
 * writers call `return()`).
 */
async function* cellsOf<Row>(run: Runner, plan: ExportPlan<Row>, first: readonly unknown[], labels: Labels): AsyncGenerator<CellValue[]> {
  const columns = plan.columns.map((c) => ({ ...c, labels: c.dict ? labels.get(c.dict) : undefined }));
  let rows = first;
  for (;;) {
    for (const row of rows) {
      yield columns.map((c) => {
        const v = c.value(row as Row);
        return c.labels && v !== null && v !== undefined ? (c.labels.get(String(v)) ?? v) : v;
      });
    }
    if (rows.length < EXPORT_CHUNK) return;
    const last = rows[rows.length - 1] as Record<string, unknown>;
    const cursor = plan.keys.map((_, i) => last[`__k${i}`]);
    rows = await run.rows(chunkStatement(plan, scopeOf(run, plan.scope), cursor));
  }
}

/**
 * The rows, with a failure after the response started logged with the request's trace id: the
 * status line is gone by then, the client only sees a truncated file.
 */
async function* logged(c: Context, cells: AsyncGenerator<CellValue[]>): AsyncGenerator<CellValue[]> {
  try {
    yield* cells;
  } catch (err) {
    c.get('deps').log.log('error', 'export failed after its response started', { traceId: c.get('traceId'), ...errorFields(err) });
    throw err;
  }
}

const pad = (n: number) => String(n).padStart(2, '0');
const stamp = (t: Date) => `${t.getUTCFullYear()}${pad(t.getUTCMonth() + 1)}${pad(t.getUTCDate())}-${pad(t.getUTCHours())}${pad(t.getUTCMinutes())}${pad(t.getUTCSeconds())}`;

/** The headers of a download made for this caller only: never kept by a shared cache, nor sniffed. */
export function downloadHeaders(fileName: string, format: ExportFormat): Record<string, string> {
  return {
    'Content-Type': format === 'csv' ? CSV_TYPE : XLSX_TYPE,
    'Content-Disposition': contentDisposition('attachment', fileName),
    'Cache-Control': 'private, no-store',
    'X-Content-Type-Options': 'nosniff',
  };
}

/** The export as the handler's answer: judged and first chunk read before the response starts, the rest streamed. */
export async function exportAnswer<Row>(c: Context, plan: ExportPlan<Row>, format: ExportFormat): Promise<Response> {
  const run = c.get('run');
  const codes = [...new Set(plan.columns.flatMap((col) => (col.dict ? [col.dict] : [])))];
  const [labelRows = [], first = []] = await run.read({
    reads: [labelsStatement(codes), chunkStatement(plan, scopeOf(run, plan.scope), undefined)],
    finish: (rows) => rows,
  });
  const header = plan.columns.map((col) => col.header);
  const cells = logged(c, cellsOf(run, plan, first, labelsOf(labelRows)));
  const body = format === 'csv' ? csvStream(header, cells) : xlsxStream(header, cells, { sheetName: plan.name });
  const fileName = `${plan.name}-${stamp(new Date(c.get('deps').clock.now()))}.${format}`;
  return new Response(body, { status: 200, headers: { ...downloadHeaders(fileName, format), 'X-Trace-Id': c.get('traceId') } });
}

/** An ISO time column as a Date cell (a spreadsheet date; CSV writes `YYYY-MM-DD HH:mm:ss` UTC). */
export const when = (v: string | null | undefined): Date | null => (v ? new Date(v) : null);
