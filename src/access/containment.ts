import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { guardStatement } from '../db/guards.ts';
import { SUPER_ADMIN_ROLE } from '../core/permissions.ts';
import { hasKind, scopeAll, scopeOrgs, userInScope } from './data-scope.ts';

/**
 * Containment (contract: "Delegation: who may act on whom"): a caller who is not a super admin
 * may act on a user or a role only if every permission code it holds or carries is one the caller
 * holds, and its data scope is no wider than the caller's. Written as SQL conditions that guard
 * statements evaluate INSIDE the write's batch (before and after its writes), so a grant racing
 * the request cannot slip between a check and the write.
 *
 * What a target holds is counted strictly: the codes of ALL its roles and menus, enabled or not (a
 * disabled role can be re-enabled later, and must not turn a past password reset into a way in).
 * What the caller holds is what passes their permission checks now: enabled roles, enabled menus.
 */

/** The codes the caller holds right now, as a subquery. */
const callerCodes = (caller: number) =>
  sql<string>`(SELECT cm.permission FROM user_role cur JOIN roles cr ON cr.id = cur.role_id AND cr.status = 'enabled'
    JOIN role_menu crm ON crm.role_id = cr.id JOIN menus cm ON cm.id = crm.menu_id AND cm.status = 'enabled'
    WHERE cur.user_id = ${caller} AND cm.permission IS NOT NULL)`;

/** Some user among `targets` (ids, SQL list or subquery) holds a code or a data scope the caller lacks. */
export const usersOutsideAuthority = (caller: number, targets: RawBuilder<unknown>) =>
  sql<boolean>`(EXISTS (SELECT 1 FROM user_role tur JOIN role_menu trm ON trm.role_id = tur.role_id JOIN menus tm ON tm.id = trm.menu_id
      WHERE tur.user_id IN ${targets} AND tm.permission IS NOT NULL AND tm.permission NOT IN ${callerCodes(caller)})
    OR (NOT ${scopeAll(caller)} AND EXISTS (SELECT 1 FROM users tu WHERE tu.id IN ${targets} AND (${scopeAll(sql.ref('tu.id'), true)}
      OR EXISTS (SELECT 1 FROM ${scopeOrgs(sql.ref('tu.id'), true)} WHERE descendant_id NOT IN ${scopeOrgs(caller)})))))`;

/** Some role among `roleIds` (SQL list or subquery) carries a code or a data scope the caller lacks. */
export const rolesOutsideAuthority = (caller: number, roleIds: RawBuilder<unknown>) =>
  sql<boolean>`(EXISTS (SELECT 1 FROM role_menu trm JOIN menus tm ON tm.id = trm.menu_id
      WHERE trm.role_id IN ${roleIds} AND tm.permission IS NOT NULL AND tm.permission NOT IN ${callerCodes(caller)})
    OR (NOT ${scopeAll(caller)} AND EXISTS (SELECT 1 FROM roles tr WHERE tr.id IN ${roleIds} AND (
      tr.data_scope = 'all' OR tr.code = ${SUPER_ADMIN_ROLE}
      OR (tr.data_scope = 'orgAndBelow' AND NOT ${hasKind(caller, 'orgAndBelow')})
      OR (tr.data_scope = 'org' AND NOT (${hasKind(caller, 'org')} OR ${hasKind(caller, 'orgAndBelow')}))
      OR (tr.data_scope = 'custom' AND EXISTS (SELECT 1 FROM role_scope_org trs JOIN org_closure toc ON toc.ancestor_id = trs.org_id
        WHERE trs.role_id = tr.id AND toc.descendant_id NOT IN ${scopeOrgs(caller)}))))))`;

/** Users among `targets` that the caller cannot see, as a condition (a target must exist and be in scope). */
export const someUserOutOfScope = (caller: number, targets: number[]) =>
  sql<boolean>`(SELECT count(*) FROM users su2 WHERE su2.id IN (SELECT value FROM json_each(${JSON.stringify(targets)}))
    AND ${userInScope(caller, sql.ref('su2.id'), sql.ref('su2.org_id'))}) < ${targets.length}`;

/** Guard statements (none for a super admin): the user(s) are in the caller's scope (else 404). */
export function userScopeGuard(auth: Caller, userIds: number[]): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('out_of_scope', someUserOutOfScope(auth.userId, userIds))];
}

/** Guard statements (none for a super admin): the target users are within the caller's authority. */
export function userAuthorityGuard(auth: Caller, targets: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('outside_authority', usersOutsideAuthority(auth.userId, targets))];
}

/** Guard statements (none for a super admin): the roles are within the caller's authority. */
export function roleAuthorityGuard(auth: Caller, roleIds: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('outside_authority', rolesOutsideAuthority(auth.userId, roleIds))];
}

/** Guard (none for a super admin): after the write, the users are still inside the caller's scope (403). */
export function userStaysInScopeGuard(auth: Caller, targets: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [
    guardStatement(
      'outside_authority',
      sql`EXISTS (SELECT 1 FROM users sx WHERE sx.id IN ${targets} AND NOT ${userInScope(auth.userId, sql.ref('sx.id'), sql.ref('sx.org_id'))})`,
    ),
  ];
}

