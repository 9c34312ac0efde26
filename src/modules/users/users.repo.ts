import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps';
import type { UserRow } from '../../db/schema';
import { idList } from '../../db/id-list';
import { runPage, whereContains, whereCreatedBetween, whereStartsWith } from '../../core/pagination';
import { USER_COLUMNS, toUser } from './user.model';
import type { UserPageInput } from './users.schemas';

const FIND_USER_SQL = `SELECT ${USER_COLUMNS.join(', ')} FROM users WHERE id = ?`;

/** A user's public columns (never password_hash), or undefined. A hot read: plain SQL, cached statement. */
export async function findUser(deps: Deps, id: number) {
  const [row] = await deps.read<Omit<UserRow, 'password_hash'>>(FIND_USER_SQL, [id]);
  return row;
}

/** Case-insensitive lookup, matching the users_login_name NOCASE index. */
export function findUserByLoginName(deps: Deps, loginName: string) {
  return deps.db
    .selectFrom('users')
    .select(USER_COLUMNS)
    .where(sql<boolean>`login_name = ${loginName} COLLATE NOCASE`)
    .executeTakeFirst();
}

/** Ends every live session of the users, so a disable or reset applies on their next request. */
export function revokeSessions(deps: Deps, userIds: number[], now: string): CompiledQuery {
  return deps.db
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('user_id', 'in', idList(userIds))
    .where('revoked_at', 'is', null)
    .compile();
}

/** Statements that replace a user's role set (an unknown role id fails the batch on its foreign key). */
export function grantStatements(deps: Deps, userId: number, roleIds: readonly number[]): CompiledQuery[] {
  const out = [deps.db.deleteFrom('user_role').where('user_id', '=', userId).compile()];
  if (roleIds.length > 0) {
    out.push(sql`INSERT INTO user_role (user_id, role_id) SELECT ${userId}, value FROM json_each(${JSON.stringify(roleIds)})`.compile(deps.db));
  }
  return out;
}

const SORT_COLUMNS = {
  id: 'users.id',
  loginName: 'users.login_name',
  nickName: 'users.nick_name',
  createdAt: 'users.created_at',
  updatedAt: 'users.updated_at',
  lastLoginAt: 'users.last_login_at',
} as const;

export async function pageUsers(deps: Deps, req: UserPageInput) {
  const p = req.params;
  let q = deps.db.selectFrom('users');
  // Login name and phone match by prefix on their indexes (a '%…%' scan of 100k users cost ~30 ms);
  // the nick name is free text and matches anywhere.
  q = whereStartsWith(q, 'users.login_name', p.loginName, { nocase: true });
  q = whereContains(q, 'users.nick_name', p.nickName);
  q = whereStartsWith(q, 'users.phone', p.phone);
  if (p.status) q = q.where('users.status', '=', p.status);
  const roleId = p.roleId;
  if (roleId !== undefined) {
    q = q.where((eb) =>
      eb.exists(eb.selectFrom('user_role').select('user_role.user_id').whereRef('user_role.user_id', '=', 'users.id').where('user_role.role_id', '=', roleId)),
    );
  }
  q = whereCreatedBetween(q, 'users.created_at', p);
  return runPage(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (qb) => qb.select(USER_COLUMNS),
    sortColumns: SORT_COLUMNS,
    defaultSort: 'createdAt',
    idColumn: 'users.id',
    map: toUser,
  });
}
