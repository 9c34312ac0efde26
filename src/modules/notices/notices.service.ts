import { sql, type CompiledQuery, type Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { notFound } from '../../core/errors.ts';
import { sanitizeRichText } from '../../core/html-sanitize.ts';
import { whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import { rowOfUserInScope } from '../../access/data-scope.ts';
import { byUserColumn, scopedPage } from '../../access/scoped-page.ts';
import { prepare, qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import { idList } from '../../db/id-list.ts';
import { lastRow, writeOf } from '../../db/plan.ts';
import { changedColumns, editBatch } from '../../db/records.ts';
import type { Runner } from '../../db/runner.ts';
import type { NoticesTable } from '../../db/schema.ts';
import { LATEST_DEFAULT, type Notice, type NoticeAddInput, type NoticeEditInput, type NoticePageInput, type NoticeParams } from './notices.schemas.ts';

/*
 * Data scope (contract: "data scope where a record has an owner"): a notice's owner is its author
 * (created_by), so the management operations (page, detail, edit, delete) see the notices whose
 * author is in the caller's scope, as files go by their uploader; a notice of an unknown (deleted)
 * author only under `all`. What a notice is FOR is everyone: `latest` and `markRead` show every
 * published notice to every logged-in user, whatever their scope.
 */

type Row = Selectable<NoticesTable>;
const COLUMNS = ['id', 'title', 'type', 'content', 'status', 'created_by', 'created_by_name', 'version', 'created_at', 'updated_at'] as const;

const toNotice = (r: Row): Notice => ({
  id: r.id,
  title: r.title,
  type: r.type,
  content: r.content,
  status: r.status,
  createdBy: r.created_by,
  createdByName: r.created_by_name,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NOT_FOUND = (id: number) => `Notice ${id} not found`;
const STALE = 'version: the notice was changed by someone else; reload it and try again';

/** The data scope of the notice pages: by author. */
export const NOTICE_SCOPE = byUserColumn(sql.ref('notices.created_by'));

/** The rows a page of notices selects for `params` before data scope (FROM and WHERE only), for anything that must select the same rows. */
export function noticeFilter(p: NoticeParams) {
  let q = qb.selectFrom('notices');
  q = whereContains(q, 'notices.title', p.title);
  if (p.type) q = q.where('notices.type', '=', p.type);
  if (p.status) q = q.where('notices.status', '=', p.status);
  if (p.createdBy !== undefined) q = q.where('notices.created_by', '=', p.createdBy);
  return q;
}

export async function pageNotices(deps: Ports, run: Runner, req: NoticePageInput) {
  const filtered = noticeFilter(req.params);
  const { page } = await scopedPage(
    run,
    req,
    (scope) => ({
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered: scope ? filtered.where(scope) : filtered,
      select: (q) => q.select(COLUMNS),
      sortColumns: { id: 'notices.id', title: 'notices.title', createdAt: 'notices.created_at', updatedAt: 'notices.updated_at' },
      defaultSort: 'createdAt' as const,
      idColumn: 'notices.id',
      map: toNotice,
    }),
    NOTICE_SCOPE,
  );
  return page;
}

const BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('notices').select(COLUMNS).where('id', '=', p.id));
const IN_SCOPE_BY_ID = prepare<{ id: number; caller: number }>((p) =>
  qb.selectFrom('notices').select(COLUMNS).where('id', '=', p.id).where(rowOfUserInScope(p.caller, sql.ref('notices.created_by'))),
);

/** One notice whose author is in the caller's scope (404 otherwise, as if it did not exist). */
export async function noticeDetail(run: Runner, id: number): Promise<Notice> {
  const row = await run.first<Row>(run.knownSuper ? BY_ID.bind({ id }) : IN_SCOPE_BY_ID.bind({ id, caller: run.userId }));
  if (!row) throw notFound(NOT_FOUND(id));
  return toNotice(row);
}

/** Adds a notice by the caller; its content sanitised before it is stored. */
export async function addNotice(deps: Ports, run: Runner, input: NoticeAddInput): Promise<Notice> {
  const auth = await run.caller();
  const now = isoNow(deps.clock);
  const row = await run.write({
    batch: [
      qb
        .insertInto('notices')
        .values({
          title: input.title,
          type: input.type,
          content: sanitizeRichText(input.content ?? ''),
          status: input.status ?? 'draft',
          created_by: auth.userId,
          created_by_name: auth.loginName,
          created_at: now,
          updated_at: now,
        })
        .returning(COLUMNS)
        .compile(),
    ],
    finish: (results) => lastRow<Row>(results),
  });
  return toNotice(row!);
}

/** Partial update under the version check, of a notice whose author is in the caller's scope (404 otherwise). */
export async function editNotice(deps: Ports, run: Runner, input: NoticeEditInput): Promise<Notice> {
  const auth = await run.caller();
  const set = changedColumns(
    { ...input, content: input.content === undefined ? undefined : sanitizeRichText(input.content) },
    { title: 'title', type: 'type', content: 'content', status: 'status' },
  );
  const scope: CompiledQuery[] = auth.isSuperAdmin
    ? []
    : [guardStatement('out_of_scope', sql`NOT ${rowOfUserInScope(auth.userId, sql`(SELECT created_by FROM notices WHERE id = ${input.id})`)}`)];
  const row = await run.write({
    batch: editBatch('notices', input, set, isoNow(deps.clock), COLUMNS, scope),
    errors: { messages: { out_of_scope: NOT_FOUND(input.id), stale_version: STALE } },
    finish: (results) => lastRow<Row>(results),
  });
  return toNotice(row!);
}

/** Deletes notices (with their read marks) whose author is in the caller's scope; other and unknown ids are ignored. */
export async function deleteNotices(run: Runner, ids: number[]): Promise<void> {
  const auth = await run.caller();
  let q = qb.deleteFrom('notices').where('id', 'in', idList(ids));
  if (!auth.isSuperAdmin) q = q.where(rowOfUserInScope(auth.userId, sql.ref('notices.created_by')));
  await run.write(writeOf([q.compile()]));
}

// ---- every logged-in user ----

const LATEST_SQL = `SELECT ${COLUMNS.map((c) => `n.${c}`).join(', ')},
    EXISTS (SELECT 1 FROM notice_reads r WHERE r.user_id = +?1 AND r.notice_id = n.id) AS read_
  FROM notices n WHERE n.status = 'published' ORDER BY n.created_at DESC, n.id DESC LIMIT +?2`;
/** Published notices minus those the user read: two index counts, not a walk of every notice. */
const UNREAD_SQL = `SELECT (SELECT count(*) FROM notices WHERE status = 'published')
  - (SELECT count(*) FROM notice_reads r JOIN notices n ON n.id = r.notice_id WHERE r.user_id = +?1 AND n.status = 'published') AS n`;

/** The caller's latest published notices, newest first, each with whether they read it, and how many they have not read. */
export function latestNotices(run: Runner, limit = LATEST_DEFAULT) {
  const me = run.userId;
  return run.read({
    reads: [
      { sql: LATEST_SQL, parameters: [me, limit] },
      { sql: UNREAD_SQL, parameters: [me] },
    ],
    finish: ([rows, unread]) => ({
      unread: Number((unread?.[0] as { n?: number } | undefined)?.n ?? 0),
      records: ((rows ?? []) as (Row & { read_: number })[]).map((r) => ({ ...toNotice(r), read: r.read_ === 1 })),
    }),
  });
}

/** Marks published notices read for the caller; other and unknown ids are ignored, a second mark changes nothing. */
export async function markNoticesRead(deps: Ports, run: Runner, ids: number[]): Promise<void> {
  await run.write({
    batch: [
      sql`INSERT INTO notice_reads (user_id, notice_id, read_at)
        SELECT ${run.userId}, n.id, ${isoNow(deps.clock)} FROM notices n WHERE n.id IN ${idList(ids)} AND n.status = 'published'
        ON CONFLICT DO NOTHING`.compile(qb),
    ],
    // Only the token's user: the caller's auth statement travels in this batch.
    anyCaller: true,
    finish: () => undefined,
  });
}
