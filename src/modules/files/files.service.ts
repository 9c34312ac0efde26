import { CompiledQuery, sql, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import { prepare, qb } from '../../db/compile.ts';
import { readsOf, resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import type { Ports } from '../../core/ports.ts';
import { AppError, badRequest, notFound, storageFull } from '../../core/errors.ts';
import { containsPattern, whereContains, whereCreatedBetween } from '../../core/pagination.ts';
import type { BlobStore } from '../../core/ports.ts';
import { isoNow } from '../../core/time.ts';
import type { FilesTable } from '../../db/schema.ts';
import { reserveAndCommit, withBlobLock } from './blob-refs.ts';
import { fileExtension, sanitizeFileName } from './file-name.ts';
import { FILE_SORT_COLUMNS, type FilePageInput } from './files.schemas.ts';
import { imageLooksComplete } from './image-complete.ts';
import { checkPixelFlood, imageDimensions, sniffImage } from './image-sniff.ts';
import { inspectStream } from './inspect-stream.ts';
import { openFilePart } from './multipart-file.ts';
import { signedQuery, type LinkAction } from '../../core/signed-links.ts';
import { idList } from '../../db/id-list.ts';
import { heldBy, holdsStatement } from '../../access/held.ts';
import { byUserColumn, scopedPage } from '../../access/scoped-page.ts';
import { rowOfUserInScope } from '../../access/data-scope.ts';
import { LINK_SESSION_LIVE } from '../../access/auth-statement.ts';

export type FileKind = 'file' | 'image';
export type FileRow = Selectable<FilesTable>;

/** Per kind: the module in the path and the action its signed links point at. */
export const KIND = {
  file: { module: 'sysFile', action: 'download' },
  image: { module: 'sysImage', action: 'preview' },
} as const satisfies Record<FileKind, { module: string; action: LinkAction }>;

/** Multipart framing and small extra fields allowed on top of the file-size limit. */
export const FRAMING_ALLOWANCE = 64 * 1024;
/**
 * The most of an upload read before its caller is checked (deferred auth: the check otherwise rides
 * with the first database call, after the body): the bound a JSON body of a deferred-auth write has.
 */
export const UNCHECKED_UPLOAD_BYTES = 1024 * 1024;
/** Enough of an image's start to reach the JPEG frame header behind large EXIF/ICC segments. */
const IMAGE_HEAD_BYTES = 256 * 1024;

export function blobStore(deps: Ports): BlobStore {
  if (!deps.blobs) throw new AppError('INTERNAL', 'File storage is not configured');
  return deps.blobs;
}

function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return Number.isInteger(m) ? `${m} MiB` : `${bytes} bytes`;
}

/** Lower-case `type/subtype` if well-formed, else the neutral binary type. */
export function normalizeContentType(declared: string | undefined): string {
  const t = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/.test(t) ? t : 'application/octet-stream';
}

/**
 * The record as the API shows it. `url` is a signed link only when `canLink` (the caller holds the
 * kind's download/preview code and sees the record): a link is as good as the code, so a reader
 * with only sys:file:page gets `url: null`.
 */
async function toRecord(deps: Ports, row: FileRow, canLink: boolean, session: string) {
  const { module, action } = KIND[row.kind];
  // The link names the caller's session: it stops working when that session ends (downloadRow).
  const query = canLink && session
    ? await signedQuery(await deps.keys.links(), action, row.id, session, deps.config.LINK_TTL_SECONDS, Math.floor(deps.clock.now() / 1000))
    : undefined;
  const base = {
    id: row.id,
    name: row.name,
    extension: row.extension,
    contentType: row.content_type,
    size: row.size,
    sha256: row.sha256,
    url: query === undefined ? null : `/app/${module}/${action}?${query}`,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
  return row.kind === 'image' ? { ...base, width: row.width ?? 0, height: row.height ?? 0 } : base;
}

export interface UploadInput {
  kind: FileKind;
  body: ReadableStream<Uint8Array> | null;
  contentType: string | undefined;
  contentLength: string | undefined;
  /** Filled in as facts become known (name, declared type, size), for the op log — failures too. */
  meta: Record<string, unknown>;
}

const unsupported = (msg: string) => new AppError('UNSUPPORTED_MEDIA_TYPE', msg);
const notAnImage = () => unsupported('file: only PNG, JPEG, GIF and WebP images are accepted');

/**
 * Streams one upload into the blob store and records it. Limits hold on the stream (413 whether
 * or not Content-Length was sent); images are accepted by magic bytes only (415 otherwise, also for
 * pixel floods and truncated files). The blob is written before the rows, so a crash leaves at
 * worst an orphan blob for the sweep; a refused upload leaves nothing.
 */
export async function uploadFile(deps: Ports, run: Runner, input: UploadInput) {
  const store = blobStore(deps);
  const { kind, meta } = input;
  const limit = kind === 'image' ? deps.config.MAX_IMAGE_BYTES : deps.config.MAX_UPLOAD_BYTES;
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `file: must be at most ${mib(limit)}`);
  const declaredLength = Number(input.contentLength ?? NaN);
  if (Number.isFinite(declaredLength) && declaredLength > limit + FRAMING_ALLOWANCE) throw tooLarge();
  if (!input.body || !/^multipart\/form-data\s*;/i.test(input.contentType ?? '')) {
    throw badRequest('body: must be multipart/form-data with a file part named "file"');
  }
  await checkFreeSpace(deps, Number.isFinite(declaredLength) ? declaredLength : 0);

  // The caller is judged at the first database call (the reservation, which carries the auth
  // statement), and that comes after the body: an unchecked caller's body is read at most
  // UNCHECKED_UPLOAD_BYTES (every part counts, a decoy before the file too), and a store that would
  // write somewhere before that call (a temporary file, anything in R2) has the caller judged first.
  // A smaller body waits in memory.
  const check = async () => void (await run.caller());
  const body = input.body.pipeThrough(checkedAfter(UNCHECKED_UPLOAD_BYTES, check));
  const part = await openFilePart(body, input.contentType!, { field: 'file', maxBodyBytes: limit + FRAMING_ALLOWANCE, tooLarge });
  const name = sanitizeFileName(part.fileName);
  meta.name = name;
  meta.declaredType = part.contentType;
  const inspector = inspectStream({
    maxBytes: limit,
    tooLarge,
    headBytes: kind === 'image' ? IMAGE_HEAD_BYTES : 0,
    tailBytes: kind === 'image' ? 64 : 0,
    // Refuse non-images at the first bytes instead of after storing megabytes of HTML.
    checkAfter: 16,
    checkHead:
      kind === 'image'
        ? (head: Uint8Array) => {
            if (!sniffImage(head)) throw notAnImage();
          }
        : undefined,
  });

  let staged;
  try {
    // Bounds of the file's size (the body minus the most framing allowed, and the body), so a store
    // can stream it out as it arrives instead of holding it (R2: bench/workerd-upload-heap.ts).
    const atLeast = Number.isFinite(declaredLength) ? Math.max(0, declaredLength - FRAMING_ALLOWANCE) : 0;
    const atMost = Number.isFinite(declaredLength) ? declaredLength : undefined;
    staged = await store.stage(part.body.pipeThrough(inspector.transform), { atLeast, atMost, beforeWrite: check });
  } catch (e) {
    throw inspector.error() ?? e;
  }
  try {
    const facts = inspector.result();
    meta.size = facts.size;
    let contentType = normalizeContentType(part.contentType);
    let dims: { width: number; height: number } | null = null;
    if (kind === 'image') {
      const sniffed = sniffImage(facts.head);
      if (!sniffed) throw notAnImage();
      contentType = sniffed.contentType;
      dims = imageDimensions(facts.head, sniffed.kind);
      if (!dims) throw unsupported(`file: the ${sniffed.kind.toUpperCase()} header is corrupt or unreadable`);
      if (!checkPixelFlood(dims.width, dims.height)) {
        throw unsupported(`file: image dimensions ${dims.width}x${dims.height} exceed the allowed size`);
      }
      if (!imageLooksComplete(sniffed.kind, facts.head, facts.tail, facts.size)) {
        throw unsupported(`file: the ${sniffed.kind.toUpperCase()} image is truncated`);
      }
      meta.width = dims.width;
      meta.height = dims.height;
    }
    meta.contentType = contentType;
    meta.sha256 = facts.sha256;

    const now = isoNow(deps.clock);
    const { row, canLink } = await withBlobLock(store, facts.sha256, async () => {
      // The reservation is the request's first database call: the auth statement travels in its
      // batch (one round trip on D1), so the caller is known after it.
      await reserveAndCommit(deps, run, facts.sha256, facts.size, () => staged.commit(facts.sha256));
      const auth = await run.caller();
      // The uploader gets a link if they hold the code and their scope covers their own uploads:
      // both read in the record's batch (no round trip of their own).
      const link = linkStatement(auth.userId, kind);
      const linkReads = auth.isSuperAdmin ? [] : [seesOwnUploadStatement(auth.userId), CompiledQuery.raw(link.sql, [...link.parameters])];
      const [, inserted, seen, held] = await run.write(resultsOf([
        qb
          .insertInto('blobs')
          .values({ sha256: facts.sha256, size: facts.size, ref_count: 1, created_at: now })
          .onConflict((oc) => oc.column('sha256').doUpdateSet({ ref_count: sql`ref_count + 1`, unreferenced_at: null }))
          .compile(),
        qb
          .insertInto('files')
          .values({
            kind,
            name,
            extension: fileExtension(name),
            content_type: contentType,
            size: facts.size,
            sha256: facts.sha256,
            width: dims?.width ?? null,
            height: dims?.height ?? null,
            created_by: auth.userId,
            created_at: now,
          })
          .returningAll()
          .compile(),
        ...linkReads,
      ]));
      const sees = (seen?.rows[0] as { seen?: number } | undefined)?.seen === 1;
      return { row: inserted!.rows[0] as FileRow, canLink: auth.isSuperAdmin || (sees && heldBy(held?.rows)) };
    });
    meta.id = row.id;
    return toRecord(deps, row, canLink, run.sessionId);
  } finally {
    await staged.discard();
  }
}

/** Passes the bytes through; before passing the chunk that takes the total over `bytes`, awaits `check` (once). */
function checkedAfter(bytes: number, check: () => Promise<void>): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    async transform(chunk, controller) {
      if (seen <= bytes && (seen += chunk.byteLength) > bytes) await check();
      controller.enqueue(chunk);
    },
  });
}

/** 507 before a byte is read when the upload would leave less than MIN_FREE_MB free (where the runtime can tell). */
async function checkFreeSpace(deps: Ports, bytes: number) {
  if (!deps.storage) return;
  const floor = deps.config.MIN_FREE_MB * 1024 * 1024;
  if ((await deps.storage.freeBytes()) - bytes < floor) throw storageFull('Storage is full: the upload was not saved');
}

/** Whether the caller may be handed signed links of this kind (holds sys:file:download / sys:image:preview), as a statement (heldBy reads it). */
function linkStatement(userId: number, kind: FileKind) {
  return holdsStatement(userId, kind === 'image' ? 'sys:image:preview' : 'sys:file:download');
}

/** Whether the caller's data scope covers records uploaded by themselves (`seen` 1/0), as a statement. */
function seesOwnUploadStatement(userId: number) {
  return sql<{ seen: number }>`SELECT ${rowOfUserInScope(userId, sql.val(userId))} AS seen`.compile(qb);
}

/**
 * One record of `kind`, as a query; on a route with a caller only if its uploader is in their data
 * scope (404 as if it did not exist otherwise). Without one: a request that came with a valid signed link.
 */
function rowQuery(run: Runner, kind: FileKind, id: number) {
  return run.userId !== 0 && !run.knownSuper ? FILE_IN_SCOPE.bind({ id, kind, caller: run.userId }) : FILE_BY_ID.bind({ id, kind });
}
// Compiled once, bound per request (rowQuery).
const FILE_BY_ID = prepare<{ id: number; kind: FileKind }>((p) => qb.selectFrom('files').selectAll().where('id', '=', p.id).where('kind', '=', p.kind));
const FILE_IN_SCOPE = prepare<{ id: number; kind: FileKind; caller: number }>((p) =>
  qb
    .selectFrom('files')
    .selectAll()
    .where('id', '=', p.id)
    .where('kind', '=', p.kind)
    .where(rowOfUserInScope(p.caller, sql.ref('files.created_by'))),
);

const notFoundOf = (kind: FileKind) => notFound(kind === 'image' ? 'Image not found' : 'File not found');

export async function fileDetail(deps: Ports, run: Runner, kind: FileKind, id: number) {
  // The record and whether the caller may be handed its link: one read (with the auth row on D1).
  const [rows = [], held] = await run.read(readsOf(rowQuery(run, kind, id), linkStatement(run.userId, kind)));
  const row = rows[0] as FileRow | undefined;
  if (!row) throw notFoundOf(kind);
  return toRecord(deps, row, heldBy(held), run.sessionId);
}

/**
 * A signed link's read: whether the session it names is still live (`link_live`), and the record
 * (its columns NULL when there is none), in ONE statement: the session check costs no round trip.
 * Binds the session, now, the id and the kind.
 */
const FILE_BY_LINK_SQL = `SELECT ${LINK_SESSION_LIVE} AS link_live, f.* FROM (SELECT 1) one LEFT JOIN files f ON f.id = +? AND f.kind = ?`;

/** A signed link whose session has ended (logout, force logout, password change or reset, disable, delete). */
const LINK_ENDED = 'This link has ended with the session that got it; reload the page for a new one';

/**
 * The record a download or preview serves (404 for an unknown id, one of the other kind, or, for a
 * bearer-token request, one outside the caller's data scope). A signed link has no caller: it names
 * the session that got it (`linkSession`), which must still be live (401), read with the record.
 */
export async function downloadRow(run: Runner, kind: FileKind, id: number, link?: { session: string; now: string }): Promise<FileRow> {
  if (link) {
    const found = await run.first<FileRow & { link_live: number }>({ sql: FILE_BY_LINK_SQL, parameters: [link.session, link.now, id, kind] });
    if (found?.link_live !== 1) throw new AppError('UNAUTHORIZED', LINK_ENDED);
    if (found.id === null) throw notFoundOf(kind);
    const { link_live: _, ...row } = found;
    return row;
  }
  const row = await run.first<FileRow>(rowQuery(run, kind, id));
  if (!row) throw notFoundOf(kind);
  return row;
}

/** Distinct content types of a kind walked one index seek each before the search falls back to testing every record. */
export const CONTENT_TYPE_WALK = 100;

/**
 * `content_type LIKE '%text%'` (as whereContains, `%` and `_` literal) answered through the
 * distinct values: up to CONTENT_TYPE_WALK of them are walked over files_kind_content_type (a
 * loose index scan: each step seeks the next larger value), the pattern is tested on those, and
 * the records are read by equality on that index. A kind with more distinct types than that (they
 * are the uploaders' declared types) takes the second arm instead: the distinct matching values
 * from one walk of the (narrow) index. Either way the set is exactly the values the LIKE matches.
 */
function whereContentTypeContains<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, kind: FileKind, text: string | undefined): QB {
  if (text === undefined) return qb;
  const pattern = containsPattern(text);
  const walk = sql.lit(CONTENT_TYPE_WALK);
  // A literal (one of two fixed words): the page repeats this filter in several parts of one
  // statement, and D1 binds at most 100 values per statement.
  const k = sql.lit(kind);
  return qb.where(sql<boolean>`content_type IN (
    WITH RECURSIVE types(v, n) AS (
      SELECT (SELECT min(content_type) FROM files WHERE kind = ${k}), 1
      UNION ALL
      SELECT (SELECT min(content_type) FROM files WHERE kind = ${k} AND content_type > v), n + 1 FROM types WHERE v IS NOT NULL AND n < ${walk})
    SELECT v FROM types WHERE v LIKE ${pattern} ESCAPE '\\'
    UNION ALL
    SELECT v FROM (SELECT DISTINCT content_type AS v FROM files WHERE kind = ${k} AND content_type LIKE ${pattern} ESCAPE '\\'
      LIMIT CASE WHEN EXISTS (SELECT 1 FROM types WHERE v IS NULL) THEN 0 ELSE -1 END))`) as QB;
}

export async function pageFiles(deps: Ports, run: Runner, kind: FileKind, req: FilePageInput) {
  const p = req.params;
  const options = (scope: RawBuilder<boolean> | undefined) => {
    let filtered = qb.selectFrom('files').where('kind', '=', kind);
    if (scope) filtered = filtered.where(scope);
    if (p.extension !== undefined) filtered = filtered.where('extension', '=', p.extension);
    filtered = whereCreatedBetween(filtered, 'created_at', p);
    const unsearched = filtered;
    filtered = whereContains(filtered, 'name', p.name);
    filtered = whereContentTypeContains(filtered, kind, p.contentType);
    return {
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered,
      select: (q: SelectQueryBuilder<any, any, any>) => q.selectAll(),
      sortColumns: FILE_SORT_COLUMNS,
      defaultSort: 'createdAt' as const,
      idColumn: 'id',
      map: (row: unknown) => row as FileRow,
      matchFirst: p.name !== undefined || p.contentType !== undefined ? unsearched : undefined,
    };
  };
  // Files and images are scoped by their uploader; rows of unknown uploaders only under `all`.
  // Whether the caller may be handed links is read in the same batch.
  const { page, extra } = await scopedPage(run, req, options, byUserColumn(sql.ref('files.created_by')), [linkStatement(run.userId, kind)]);
  const canLink = heldBy(extra[0]);
  return { ...page, records: await Promise.all(page.records.map((row) => toRecord(deps, row, canLink, run.sessionId))) };
}

/**
 * Deletes records of one kind (unknown ids are ignored). In one batch: the rows go and each affected
 * blob's count is recomputed from the remaining rows (so concurrent deletes cannot double-count);
 * a blob left at zero is only marked (`unreferenced_at`): its content stays until the sweep
 * (cleanupBlobs) removes it after the grace period, so backups stay consistent.
 */
export async function deleteFiles(deps: Ports, run: Runner, kind: FileKind, ids: number[]) {
  const auth = await run.caller();
  // The records acted on, as a condition on alias `f`: this kind, these ids (one bound JSON list:
  // 100 ids plus `kind` would exceed D1's 100 parameters), in the caller's data scope (others are
  // skipped like unknown ids).
  const targeted = (f: string) =>
    sql<boolean>`(${sql.ref(`${f}.kind`)} = ${kind} AND ${sql.ref(`${f}.id`)} IN ${idList(ids)}
      AND ${auth.isSuperAdmin ? sql`1` : rowOfUserInScope(auth.userId, sql.ref(`${f}.created_by`))})`;
  // ONE batch, no read before it: first each affected blob's count is recomputed as the rows that
  // will remain (so concurrent deletes cannot double-count), then the rows go.
  const remaining = sql<number>`(SELECT count(*) FROM files rf WHERE rf.sha256 = blobs.sha256 AND NOT ${targeted('rf')})`;
  const [, deletedFiles] = await run.write(resultsOf([
    qb
      .updateTable('blobs')
      .set({
        ref_count: remaining,
        // Keeps the first time it reached zero, so repeated deletes cannot postpone the sweep.
        unreferenced_at: sql`CASE WHEN ${remaining} > 0 THEN NULL ELSE coalesce(unreferenced_at, ${isoNow(deps.clock)}) END`,
      })
      .where('sha256', 'in', sql<string>`(SELECT tf.sha256 FROM files tf WHERE ${targeted('tf')})`)
      .compile(),
    qb.deleteFrom('files').where(targeted('files')).compile(),
  ]));
  return { deleted: Number(deletedFiles!.numAffectedRows ?? 0) };
}
