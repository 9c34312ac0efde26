import { sql, type Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { badRequest } from '../../core/errors.ts';
import { whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import { prepare, qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import { idList } from '../../db/id-list.ts';
import { writeOf } from '../../db/plan.ts';
import { changedColumns, editBatch, recordReads } from '../../db/records.ts';
import type { Runner } from '../../db/runner.ts';
import type { PostsTable } from '../../db/schema.ts';
import type { Post, PostAddInput, PostEditInput, PostPageInput, PostParams } from './posts.schemas.ts';

type Row = Selectable<PostsTable>;
const COLUMNS = ['id', 'code', 'name', 'sort', 'status', 'remark', 'version', 'created_at', 'updated_at'] as const;

const toPost = (r: Row): Post => ({
  id: r.id,
  code: r.code,
  name: r.name,
  sort: r.sort,
  status: r.status,
  remark: r.remark,
  version: r.version,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const NOT_FOUND = (id: number) => `Post ${id} not found`;
const reads = recordReads({
  table: 'posts',
  columns: COLUMNS,
  map: toPost,
  notFound: NOT_FOUND,
  sortColumns: { id: 'id', code: 'code', name: 'name', sort: 'sort', createdAt: 'created_at', updatedAt: 'updated_at' },
});
const STALE = 'version: the post was changed by someone else; reload it and try again';
const codeTaken = (code: string) => `code: '${code}' is already taken`;

/** The rows a page of posts selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function postFilter(p: PostParams) {
  let q = qb.selectFrom('posts');
  q = whereContains(q, 'posts.code', p.code);
  q = whereContains(q, 'posts.name', p.name);
  if (p.status) q = q.where('posts.status', '=', p.status);
  return q;
}

export function pagePosts(deps: Ports, run: Runner, req: PostPageInput) {
  return reads.page(deps, run, req, postFilter(req.params));
}

const ENABLED = prepare<Record<string, never>>(() => qb.selectFrom('posts').select(COLUMNS).where('status', '=', 'enabled').orderBy('sort').orderBy('id'));

/** Every enabled post in display order, for pickers. */
export async function listPosts(run: Runner): Promise<Post[]> {
  return (await run.rows<Row>(ENABLED.bind({}))).map(toPost);
}

export const postDetail = reads.detail;

export async function addPost(deps: Ports, run: Runner, input: PostAddInput): Promise<Post> {
  const now = isoNow(deps.clock);
  return run.write({
    batch: [
      qb
        .insertInto('posts')
        .values({ code: input.code, name: input.name, sort: input.sort ?? 0, status: input.status ?? 'enabled', remark: input.remark ?? null, created_at: now, updated_at: now })
        .returning(COLUMNS)
        .compile(),
    ],
    errors: { unique: codeTaken(input.code) },
    finish: reads.answer,
  });
}

export async function editPost(deps: Ports, run: Runner, input: PostEditInput): Promise<Post> {
  const set = changedColumns(input, { code: 'code', name: 'name', sort: 'sort', status: 'status', remark: 'remark' });
  return run.write({
    batch: editBatch('posts', input, set, isoNow(deps.clock), COLUMNS),
    errors: { unique: codeTaken(input.code ?? ''), messages: { out_of_scope: NOT_FOUND(input.id), stale_version: STALE } },
    finish: reads.answer,
  });
}

/**
 * Deletes posts, all or nothing: while a user holds one of them the batch is refused (400) by its
 * guard, judged inside the write (a grant racing the delete cannot be lost; the user_post key
 * would refuse it too). Unknown ids are ignored.
 */
export async function deletePosts(run: Runner, ids: number[]): Promise<void> {
  const explain = async () => {
    const held = await run.first<{ post_id: number; code: string; n: number }>(
      sql`SELECT up.post_id, p.code, count(*) AS n FROM user_post up JOIN posts p ON p.id = up.post_id
        WHERE up.post_id IN ${idList(ids)} GROUP BY up.post_id ORDER BY up.post_id LIMIT 1`.compile(qb),
    );
    if (held) throw badRequest(`ids: post ${held.post_id} (${held.code}) is held by ${held.n} user${held.n === 1 ? '' : 's'}; take it from them first`);
  };
  await run.write(
    writeOf(
      [
        guardStatement('post_in_use', sql`EXISTS (SELECT 1 FROM user_post WHERE post_id IN ${idList(ids)})`),
        qb.deleteFrom('posts').where('id', 'in', idList(ids)).compile(),
      ],
      undefined,
      explain,
    ),
  );
}
