import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import { qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';

/**
 * Statements that replace the posts a user holds (sysUser add/edit `postIds`), for the user's write
 * batch: a post that does not exist refuses the batch (400, post_unknown) before anything changes.
 * `user` is the user's id as SQL (a value, or the new row found by its login name).
 */
export function userPostStatements(user: RawBuilder<unknown>, postIds: readonly number[]): CompiledQuery[] {
  const list = JSON.stringify(postIds);
  const out = [qb.deleteFrom('user_post').where('user_id', '=', user as RawBuilder<number>).compile()];
  if (postIds.length > 0) {
    out.unshift(guardStatement('post_unknown', sql`EXISTS (SELECT 1 FROM json_each(${list}) pj WHERE pj.value NOT IN (SELECT id FROM posts))`));
    out.push(sql`INSERT INTO user_post (user_id, post_id) SELECT ${user}, value FROM json_each(${list}) WHERE ${user} IS NOT NULL`.compile(qb));
  }
  return out;
}
