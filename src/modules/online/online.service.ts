import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { whereContains } from '../../core/pagination.ts';
import { byUserRow, scopedPage } from '../../access/scoped-page.ts';
import { isoNow } from '../../core/time.ts';
import type { OnlinePageInput } from './online.schemas.ts';
import { SUPER_ADMIN_ROLE } from '../../core/permissions.ts';
import { qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import type { Runner } from '../../db/runner.ts';
import { userAuthorityGuard } from '../../access/containment.ts';
import { userInScope } from '../../access/data-scope.ts';

const SORT = { loginAt: 's.login_at', expiresAt: 's.expires_at', loginName: sql`u.login_name COLLATE NOCASE`, ip: 's.ip' };

/** The page's data scope: the session's user. */
export const ONLINE_SCOPE = byUserRow(sql.ref('u.org_id'), sql.ref('u.id'));

/** The live sessions (not revoked, not expired) a page selects for `params`, before data scope (FROM and WHERE only). */
export function onlineFilter(deps: Ports, p: OnlinePageInput['params']) {
  let q = qb
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', isoNow(deps.clock));
  q = whereContains(q, 'u.login_name', p.loginName);
  return whereContains(q, 's.ip', p.ip);
}

/** Live sessions only (not revoked, not expired) of users in the caller's data scope, with their login name. */
export async function pageOnline(deps: Ports, run: Runner, req: OnlinePageInput) {
  const options = (scope: RawBuilder<boolean> | undefined) => {
    let filtered = onlineFilter(deps, req.params);
    if (scope) filtered = filtered.where(scope);
    return {
      maxPageSize: deps.config.PAGE_SIZE_MAX,
      filtered,
      select: (q: SelectQueryBuilder<any, any, any>) =>
        q.select(['s.id', 's.user_id', 'u.login_name', 's.ip', 's.user_agent', 's.browser', 's.os', 's.login_at', 's.expires_at']),
      sortColumns: SORT,
      defaultSort: 'loginAt' as const,
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
    };
  };
  return (await scopedPage(run, req, options, ONLINE_SCOPE)).page;
}

/**
 * Revokes the given sessions; their tokens fail on the very next request because authentication
 * reads the session row every time. Unknown or already ended sessions, and sessions of users
 * outside the caller's data scope, are skipped alike (a session may expire between listing and
 * clicking). For a caller who is not a super admin, inside the batch: the sessions' users must be
 * within the caller's authority (403), and a super admin's session is for super admins only (403).
 * Returns how many were revoked.
 */
export async function forceLogout(deps: Ports, run: Runner, sessionIds: string[]): Promise<number> {
  const auth = await run.caller();
  // One bound parameter for the whole list: with up to 100 ids plus the others D1 would refuse it.
  const list = sql<string>`(SELECT value FROM json_each(${JSON.stringify(sessionIds)}))`;
  const owners = auth.isSuperAdmin
    ? sql<number>`(SELECT fs.user_id FROM sessions fs WHERE fs.id IN ${list})`
    : sql<number>`(SELECT fs.user_id FROM sessions fs JOIN users fu ON fu.id = fs.user_id
        WHERE fs.id IN ${list} AND fs.revoked_at IS NULL AND ${userInScope(auth.userId, sql.ref('fu.id'), sql.ref('fu.org_id'))})`;
  const superOwner = sql`EXISTS (SELECT 1 FROM user_role sur JOIN roles sr ON sr.id = sur.role_id
    WHERE sur.user_id IN ${owners} AND sr.code = ${SUPER_ADMIN_ROLE})`;
  return run.write({
    batch: [
      ...(auth.isSuperAdmin ? [] : [guardStatement('super_admin_only', superOwner)]),
      ...userAuthorityGuard(auth, owners),
      qb
        .updateTable('sessions')
        .set({ revoked_at: isoNow(deps.clock) })
        .where('id', 'in', list)
        .where('revoked_at', 'is', null)
        .where('user_id', 'in', owners)
        .compile(),
    ],
    errors: {
      messages: {
        super_admin_only: "Only a super administrator can end a super administrator's session",
        outside_authority: 'Refused: outside your authority (a session belongs to a user who holds a permission or a data scope that you do not hold)',
      },
    },
    finish: (results) => Number(results.at(-1)?.numAffectedRows ?? 0),
  });
}
