import { z } from '@hono/zod-openapi';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { MAX_BOUND_PARAMS, type ReadStatement } from './ports.ts';
import { badRequest } from './errors.ts';

/**
 * The one page mechanism behind every `.../page` action: request and response schemas (named for
 * OpenAPI), the filter helpers, and pageStatements() which applies sort, limit/offset and the optional count.
 */

export const SORT_ORDERS = ['asc', 'desc'] as const;
/** Longest search text a filter accepts, in characters. */
export const LIKE_MAX = 48;
/** D1 refuses LIKE patterns over 50 bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH), escapes and `%…%` included. */
export const LIKE_PATTERN_MAX_BYTES = 50;

export function pageRequestSchema<P extends z.ZodObject, S extends string>(name: string, params: P, sortFields: readonly [S, ...S[]]) {
  return z
    .strictObject({
      pageNo: z.number().int('must be an integer').min(1, 'must be at least 1').max(10_000_000).default(1),
      pageSize: z.number().int('must be an integer').min(1, 'must be at least 1').max(1000, 'must be at most 1000').default(10),
      params: params.default({} as never),
      sortField: z.enum(sortFields as unknown as [S, ...S[]]).optional(),
      sortOrder: z.enum(SORT_ORDERS).default('desc'),
      searchCount: z.boolean().default(true),
    })
    .openapi(name);
}

export function pageResponseSchema<R extends z.ZodType>(name: string, record: R) {
  return z
    .object({
      records: z.array(record),
      total: z.number().int(),
      size: z.number().int(),
      current: z.number().int(),
      pages: z.number().int(),
      searchCount: z.boolean(),
    })
    .openapi(name);
}

export interface PageRequest<S extends string = string> {
  pageNo: number;
  pageSize: number;
  sortField?: S | undefined;
  sortOrder: 'asc' | 'desc';
  searchCount: boolean;
}

export interface PageResult<R> {
  records: R[];
  total: number;
  size: number;
  current: number;
  pages: number;
  searchCount: boolean;
}

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/**
 * A search-text filter: trimmed, non-empty, short enough that its escaped `%…%` pattern fits
 * D1's LIKE limit (so a search that works on Bun cannot turn into a 500 on Workers).
 */
export const likeText = () =>
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(LIKE_MAX, `must be at most ${LIKE_MAX} characters`)
    .refine((v) => utf8Length(containsPattern(v)) <= LIKE_PATTERN_MAX_BYTES, {
      message: `is too long to search for (at most ${LIKE_PATTERN_MAX_BYTES - 2} bytes; % _ \\ count twice)`,
    });

/** ISO date (`2026-11-22`) or date-time; bounds of a createdFrom/createdTo range. */
const isoDateOrTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })], { message: 'must be an ISO 8601 date or date-time' });
export const dateRangeParams = { createdFrom: isoDateOrTime.optional(), createdTo: isoDateOrTime.optional() };

/** `%`, `_` and `\` in user text match themselves: they are escaped and the LIKE uses ESCAPE '\'. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/** `column LIKE '%text%'` with the text bound as a parameter and matched literally. */
export function whereContains<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, column: string, text: string | undefined): QB {
  if (text === undefined) return qb;
  return qb.where(sql<boolean>`${sql.ref(column)} LIKE ${containsPattern(text)} ESCAPE '\\'`) as QB;
}

/** Inclusive created-at range; a date-only `createdTo` covers that whole day. */
export function whereCreatedBetween<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  column: string,
  range: { createdFrom?: string | undefined; createdTo?: string | undefined },
): QB {
  const { from, to } = createdBounds(range);
  let q = qb;
  if (from !== undefined) q = q.where(sql.ref(column), '>=', from) as QB;
  if (to !== undefined) q = q.where(sql.ref(column), '<=', to) as QB;
  return q;
}

/** The inclusive ISO bounds whereCreatedBetween compares with (a date-only `createdTo` ends at 23:59:59.999Z). */
export function createdBounds(range: { createdFrom?: string | undefined; createdTo?: string | undefined }): { from?: string; to?: string } {
  if (range.createdFrom && range.createdTo && new Date(range.createdFrom) > new Date(range.createdTo)) {
    throw badRequest('params.createdFrom: must not be after createdTo');
  }
  const bounds: { from?: string; to?: string } = {};
  if (range.createdFrom) bounds.from = new Date(range.createdFrom).toISOString();
  if (range.createdTo) {
    bounds.to = /^\d{4}-\d{2}-\d{2}$/.test(range.createdTo) ? `${range.createdTo}T23:59:59.999Z` : new Date(range.createdTo).toISOString();
  }
  return bounds;
}

/** Offsets from which a page first picks its ids, then reads their rows (see pageStatements). */
export const DEFERRED_JOIN_OFFSET = 1000;

export interface PageOptions<S extends string, Row, R> {
  maxPageSize: number;
  filtered: SelectQueryBuilder<any, any, any>;
  /** The same rows for the count, when the WHERE is best written for another index there (default: filtered). */
  counted?: SelectQueryBuilder<any, any, any>;
  /** The whole count statement (one row, column `n`), when the number comes from elsewhere than a COUNT of the rows (e.g. count tables). */
  count?: SelectQueryBuilder<any, any, { n: number }> | undefined;
  select: (qb: SelectQueryBuilder<any, any, any>) => SelectQueryBuilder<any, any, Row>;
  /** A column name, or an expression such as sql`login_name COLLATE NOCASE` for a case-insensitive order. */
  sortColumns: Record<S, string | RawBuilder<unknown>>;
  defaultSort: S;
  idColumn: string;
  map: (row: Row) => R;
  /**
   * A condition without columns (e.g. "the caller's scope is `all`"): when false the statements read
   * nothing. Written into LIMIT (`CASE WHEN gate THEN n ELSE 0 END`), which SQLite evaluates once
   * before the loop; in WHERE it is tested on every row, so a false gate walked the whole index
   * (~5 ms over 100k users) and a true one lost SQLite's whole-table count.
   */
  gate?: RawBuilder<unknown>;
  /**
   * `filtered` without its part-of searches, when it has any. A part-of search (`LIKE '%…%'`)
   * cannot seek an index: SQLite tests it
   * on every entry of the index it walks, so a page that walks the sort order reads every row when
   * the matches are few or lie far down that order (~35 ms over 100k users), and the count then
   * tests every entry of the filter's index again (~8 ms). Set (and the page lies within the first
   * PROBE_ROWS of the order), the page is ONE statement that first probes the first PROBE_ROWS
   * rows of this query's sort order (rowids from the sort index, each row read and tested):
   * - the page is among them: it walks the sort order as usual (it stops within those rows) and
   *   the total is the usual count — one walk of the filter's index;
   * - it is not: the matches are few or far: it collects every matching id over the filter's index
   *   (that one walk), sorts them for the page, and their number is the total.
   */
  matchFirst?: SelectQueryBuilder<any, any, any>;
  /**
   * With matchFirst, for a filter an index serves (a name prefix on (name, created_at)) while the
   * page sorts by another (created_at): `filtered` hides that filter from the planner (so the
   * probe's case walks the sort order) and `seek` is the same rows with it visible. When the probe
   * does not find the page, the page's ids are those of `seek` numbered in the sort order, sorted
   * off the sort index (the planner seeks the filter's index; when that index holds the sort key,
   * the sort reads no rows), and the total is the usual count, not the matches: cost ∝ the matches
   * instead of the rows walked before the page (a broad prefix whose matches are all old walked
   * nearly the whole log); with fewer than SEEK_FEW matches in all there is no probe, the matches
   * are sorted. The count is then a second statement of the page (same batch). Unset:
   * every match is collected and counted (part-of searches).
   */
  seek?: SelectQueryBuilder<any, any, any>;
  /** The count's own condition, when it differs from the rows' (default: gate). */
  countGate?: RawBuilder<unknown>;
  /** The count comes from elsewhere (e.g. read with the caller's scope): no count statement; finish() takes its row (`n`) second, as always. */
  countedElsewhere?: boolean;
}

/** Rows of the sort order a part-of search probes before it collects every match instead (PageOptions.matchFirst). */
export const PROBE_ROWS = 2000;

/** A page query as statements (rows, then the count when asked) and how to read their results. */
export interface PageStatements<R> {
  statements: ReadStatement[];
  finish(results: readonly unknown[][]): PageResult<R>;
}

/**
 * A page query, compiled. `filtered` holds the FROM and WHERE parts only; `select` adds the
 * columns. The sort column comes from the operation's whitelist (never from client text), with
 * `id` as a tie-breaker so pages are stable.
 */
export function pageStatements<S extends string, Row, R>(req: PageRequest<S>, opts: PageOptions<S, Row, R>): PageStatements<R> {
  if (req.pageSize > opts.maxPageSize) throw badRequest(`pageSize: must be at most ${opts.maxPageSize}`);
  const column = opts.sortColumns[req.sortField ?? opts.defaultSort];
  const gatedBy = (gate: RawBuilder<unknown> | undefined, n: number) => (gate ? sql<number>`CASE WHEN ${gate} THEN ${n} ELSE 0 END` : n);
  const gated = (n: number) => gatedBy(opts.gate, n);
  const ordered = <Q extends SelectQueryBuilder<any, any, any>>(qb: Q, limit: number | RawBuilder<number> = req.pageSize): Q =>
    qb
      .orderBy(typeof column === 'string' ? sql.ref(column) : column, req.sortOrder)
      .orderBy(sql.ref(opts.idColumn), req.sortOrder)
      .limit(limit) as Q;
  const offset = (req.pageNo - 1) * req.pageSize;
  // A deep page skips its offset over ids only (the sort index, no row reads, no joins), then reads
  // the page's rows: OFFSET would otherwise fetch and discard every skipped row.
  const rowsQuery = (limit: number | RawBuilder<number>) =>
    offset >= DEFERRED_JOIN_OFFSET
      ? ordered(opts.select(opts.filtered.where(sql.ref(opts.idColumn), 'in', ordered(opts.filtered.select(sql.ref(opts.idColumn).as('page_id'))).offset(offset))), limit)
      : ordered(opts.select(opts.filtered), limit).offset(offset);
  const countQuery = opts.count ?? (opts.counted ?? opts.filtered).select((eb) => eb.fn.countAll<number>().as('n'));
  const pageOf = (rows: Row[], total: number): PageResult<R> => ({
    records: rows.map(opts.map),
    total,
    size: req.pageSize,
    current: req.pageNo,
    pages: req.searchCount ? Math.ceil(total / req.pageSize) : 0,
    searchCount: req.searchCount,
  });
  const statement = opts.matchFirst && offset + req.pageSize <= PROBE_ROWS ? matchFirstStatement(req, opts, { gated, rowsQuery, countQuery, offset }) : undefined;
  const countStatements = (): ReadStatement[] => {
    if (!req.searchCount || opts.countedElsewhere) return [];
    const countGate = 'countGate' in opts ? opts.countGate : opts.gate;
    return [(countGate ? countQuery.limit(gatedBy(countGate, 1)) : countQuery).compile()];
  };
  // It repeats the filters in each part: with many of them it could bind more than D1 allows.
  if (statement && statement.parameters.length <= MAX_BOUND_PARAMS) {
    // With `seek` the total is the usual count, its own statement in the same batch (inside the
    // page's statement a count-table total nests past D1's expression depth of 100).
    const counted = opts.seek ? countStatements() : [];
    return {
      statements: [statement, ...counted],
      finish: ([rows = [], n = []]) => {
        const all = rows as (Row & { __total: number; __id: unknown })[];
        // A page past the end is the one row of the outer join with no page row in it.
        const found = all.filter((r) => r.__id !== null).map(({ __total, __id, __sort, ...row }: any) => row as Row);
        const total = opts.seek ? (n[0] as { n?: number } | undefined)?.n : all[0]?.__total;
        return pageOf(found, Number(total ?? 0));
      },
    };
  }
  const statements: ReadStatement[] = [rowsQuery(gated(req.pageSize)).compile(), ...countStatements()];
  return {
    statements,
    finish: ([rows = [], counted = []]) => pageOf(rows as Row[], Number((counted[0] as { n?: number } | undefined)?.n ?? 0)),
  };
}

/** SQL text and its `?` parameters, in order: compiled parts and plain text glued into one statement. */
function joinSql(parts: (string | ReadStatement)[]): ReadStatement {
  return {
    sql: parts.map((p) => (typeof p === 'string' ? p : p.sql)).join(''),
    parameters: parts.flatMap((p) => (typeof p === 'string' ? [] : p.parameters)),
  };
}

/**
 * The page of PageOptions.matchFirst as one statement (SQLite evaluates a MATERIALIZED CTE once):
 *   WITH probe(n) = matches among the first PROBE_ROWS rows of the sort order, at most `need`
 *        (offset + pageSize); near = n reached `need`,
 *        m(id) = every matching id, only when not near (no m with `seek`),
 *        t(total) = near ? the count : the number of m (0 without searchCount; with `seek` 0, the
 *        count is a statement of its own)
 *   SELECT page rows, total FROM t LEFT JOIN (sorted m, or the page of `seek` off the sort index [not near]
 *          UNION ALL sort walk [near])
 * Each part's LIMIT is 0 unless its case holds; SQLite evaluates a LIMIT once, before the loop,
 * so the part not taken reads nothing. The outer join keeps the total on a page past the end.
 */
function matchFirstStatement<S extends string, Row, R>(
  req: PageRequest<S>,
  opts: PageOptions<S, Row, R>,
  parts: {
    gated: (n: number) => number | RawBuilder<number>;
    rowsQuery: (limit: number | RawBuilder<number>) => SelectQueryBuilder<any, any, any>;
    countQuery: SelectQueryBuilder<any, any, any>;
    offset: number;
  },
): ReadStatement {
  const column = opts.sortColumns[req.sortField ?? opts.defaultSort];
  const sortExpr: RawBuilder<unknown> = typeof column === 'string' ? sql`${sql.ref(column)}` : column;
  const id = sql.ref(opts.idColumn);
  const need = parts.offset + req.pageSize;
  const near = sql<number>`(SELECT n FROM probe) >= ${sql.lit(need)}`;
  const when = (cond: RawBuilder<unknown>, n: number) => sql<number>`CASE WHEN ${cond} THEN ${parts.gated(n)} ELSE 0 END`;
  const keyed = (qb: SelectQueryBuilder<any, any, any>) => qb.select([sortExpr.as('__sort'), id.as('__id')]);
  const top = opts.matchFirst!
    .select(id.as('id'))
    .orderBy(sortExpr, req.sortOrder)
    .orderBy(id, req.sortOrder)
    .limit(parts.gated(PROBE_ROWS));
  // With `seek`, no probe when the filter's index holds fewer than SEEK_FEW matches: sorting those
  // costs less than the probe (a name filter for one user).
  const few = opts.seek && sql`(SELECT count(*) FROM (${opts.seek.select(sql.lit(1).as('hit')).limit(parts.gated(SEEK_FEW))})) >= ${SEEK_FEW}`;
  const probe = opts.filtered.select(sql.lit(1).as('hit')).where(id, 'in', top).limit(few ? sql<number>`CASE WHEN ${few} THEN ${need} ELSE 0 END` : need);
  const all = opts.filtered.select(id.as('id')).limit(when(sql`NOT ${near}`, -1));
  const dir = req.sortOrder === 'asc' ? 'ASC' : 'DESC';
  // The page's ids first (only the filter's index and the sort key), then their rows. Numbered
  // by a window over one full sort, not ORDER BY … LIMIT: SQLite keeps that LIMIT's rows in a
  // b-tree, and when the entries come in sort order (names that grow with time) each one displaces
  // another: 18 ms vs 7 for page 50 of 50k matches. The LIMIT only stops the scan early.
  const ranked = opts.seek?.select([id.as('id'), sql`row_number() OVER (ORDER BY +${sortExpr} ${sql.raw(dir)}, +${id} ${sql.raw(dir)})`.as('rn')]);
  const sorted = ranked
    ? keyed(opts.select(opts.seek!.where(id, 'in', sql`(SELECT id FROM (${ranked}) WHERE rn > ${parts.offset} AND rn <= ${need} LIMIT ${when(sql`NOT ${near}`, req.pageSize)})`)))
    : // The matches, sorted: unary plus keeps the planner from walking the sort index to find them.
      keyed(opts.select(opts.filtered.where(id, 'in', sql`(SELECT id FROM m)`)))
        .orderBy(sql`+${sortExpr}`, req.sortOrder)
        .orderBy(sql`+${id}`, req.sortOrder)
        .limit(when(sql`NOT ${near}`, req.pageSize))
        .offset(parts.offset);
  const walked = keyed(parts.rowsQuery(when(near, req.pageSize)));
  // In LIMIT too: SQLite evaluates an uncorrelated subquery up front, even in a CASE arm not taken.
  const counted = parts.countQuery.limit(when(near, 1)).compile();
  // With `seek` the count is a statement of its own (pageStatements).
  const total = !req.searchCount || opts.seek ? ['0'] : ['CASE WHEN n >= ', String(need), ' THEN (', counted, ') ELSE (SELECT count(*) FROM m) END'];
  return joinSql([
    'WITH probe(n) AS MATERIALIZED (SELECT count(*) FROM (',
    probe.compile(),
    // With `seek` no match is collected: no m.
    ...(opts.seek ? [')), '] : [')), m(id) AS MATERIALIZED (', all.compile(), '), ']),
    't(total) AS MATERIALIZED (SELECT ',
    ...total,
    ' FROM probe) SELECT p.*, t.total AS __total FROM t LEFT JOIN (SELECT * FROM (',
    sorted.compile(),
    ') UNION ALL SELECT * FROM (',
    walked.compile(),
    `)) AS p ON 1 ORDER BY p.__sort ${dir}, p.__id ${dir}`,
  ]);
}

/** Matches below which a `seek` page sorts them without probing the sort order first. */
export const SEEK_FEW = 1000;

/** Ids of batch actions: positive safe integers, 1..100 of them, duplicates folded. */
export const idSchema = z.number({ message: 'must be a number' }).int('must be an integer').positive('must be positive').max(Number.MAX_SAFE_INTEGER, 'is too large');
export const idsSchema = z
  .array(idSchema, { message: 'must be an array of ids' })
  .min(1, 'must contain at least one id')
  .max(100, 'must contain at most 100 ids')
  .transform((ids) => [...new Set(ids)]);

const ID_TEXT = /^[1-9][0-9]{0,15}$/;

/**
 * `?id=` query parameter: digits only, a positive safe integer. Typed to accept a number too, so a
 * typed client (hc) can pass `{ id: 5 }`; on the wire it is always the decimal string. One
 * transform rather than a pipe of checks: every detail read validates it (a third of zod's cost
 * there), and the OpenAPI shape comes from the `.openapi()` description either way.
 */
export const idQuerySchema = z.strictObject({
  id: z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const text = String(value);
      const n = ID_TEXT.test(text) ? Number(text) : NaN;
      if (Number.isSafeInteger(n)) return n;
      ctx.addIssue({ code: 'custom', message: Number.isNaN(n) ? 'must be a positive integer' : 'is too large' });
      return z.NEVER;
    })
    .openapi({ param: { name: 'id', in: 'query' }, example: 42, type: 'integer', minimum: 1 }),
});

/**
 * The end of the range of strings starting with `text`: `text` followed by the byte 0xF5, which no
 * UTF-8 text holds (lead bytes stop at 0xF4) and NOCASE leaves alone (it folds ASCII only), so
 * `[text, prefixEnd(text))` holds exactly the strings starting with text — also those continuing
 * with U+10FFFF, which a `text || U+10FFFF` bound left out.
 */
const prefixEnd = (text: string) => sql<string>`(${text} || CAST(x'F5' AS TEXT))`;

/** `col` (a column, maybe with a collation) starts with `text`: the range both bounds of which an index serves. */
export const startsWith = (col: RawBuilder<unknown>, text: string) => sql<boolean>`${col} >= ${text} AND ${col} < ${prefixEnd(text)}`;

/**
 * `column` starts with `text`, as a range (`>= text AND < prefixEnd(text)`) so an index on the
 * column serves it, unlike `LIKE '%…%'`; wildcards and quotes in the text are plain characters.
 * `nocase` compares ASCII case-insensitively and needs a `COLLATE NOCASE` index to be fast;
 * `unindexed` makes the planner ignore the column's index for this term.
 */
export function whereStartsWith<QB extends SelectQueryBuilder<any, any, any>>(
  qb: QB,
  column: string,
  text: string | undefined,
  opts: { nocase?: boolean; unindexed?: boolean } = {},
): QB {
  if (text === undefined) return qb;
  // A unary plus keeps the planner off the column's index (e.g. to walk another index in sort order).
  const ref = opts.unindexed ? sql`(+${sql.ref(column)})` : sql.ref(column);
  const col = opts.nocase ? sql`${ref} COLLATE NOCASE` : ref;
  return qb.where(startsWith(col, text)) as QB;
}
