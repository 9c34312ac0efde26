import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { runPage, whereContains } from '../../core/pagination.ts';
import { isoNow } from '../../core/time.ts';
import type { OnlinePageInput } from './online.schemas.ts';

const SORT = { loginAt: 's.login_at', expiresAt: 's.expires_at', loginName: sql`u.login_name COLLATE NOCASE`, ip: 's.ip' };

/** Live sessions only: not revoked and not expired, joined with their user's login name. */
export async function pageOnline(deps: Deps, req: OnlinePageInput) {
  let filtered = deps.db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', isoNow(deps.clock));
  filtered = whereContains(filtered, 'u.login_name', req.params.loginName);
  filtered = whereContains(filtered, 's.ip', req.params.ip);
  return runPage(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    select: (qb) =>
      qb.select(['s.id', 's.user_id', 'u.login_name', 's.ip', 's.user_agent', 's.browser', 's.os', 's.login_at', 's.expires_at']),
    sortColumns: SORT,
    defaultSort: 'loginAt',
    idColumn: 's.id',
    map: (r: Record<string, any>) => ({
      sessionId: r.id as string,
      userId: r.user_id as number,
      loginName: r.login_name as string,
      ip: r.ip as string,
      userAgent: r.user_agent as string,
      browser: r.browser as string,
      os: r.os as string,
      loginAt: r.login_at as string,
      expiresAt: r.expires_at as string,
    }),
  });
}

/**
 * Revokes the given sessions; their tokens fail on the very next request because authentication
 * reads the session row every time. Unknown or already ended sessions are skipped (idempotent:
 * a session may expire between listing and clicking). Returns how many were revoked.
 */
export async function forceLogout(deps: Deps, sessionIds: string[]): Promise<number> {
  const result = await deps.db
    .updateTable('sessions')
    .set({ revoked_at: isoNow(deps.clock) })
    // One bound parameter for the whole list: with up to 100 ids plus the others D1 would refuse it.
    .where('id', 'in', sql<string>`(SELECT value FROM json_each(${JSON.stringify(sessionIds)}))`)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
