import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { guardStatement } from '../db/guards.ts';
import { SUPER_ADMIN_ROLE } from '../core/permissions.ts';
import { hasKind, scopeAll, scopeOrgs, userInScope } from './data-scope.ts';
import type { DataScopeKind } from '../db/schema.ts';

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


/** A data scope given as values: what a role is about to get (add, edit, grantDataScope). */
export interface ScopeValue {
  kind: DataScopeKind;
  orgIds: readonly number[];
}

/**
 * "Nobody widens themselves": `scope` (values, not yet written) is wider than `caller`'s scope as
 * it stands when this runs. Kinds are compared as rolesOutsideAuthority compares a role's: `all`
 * needs `all`; `orgAndBelow` needs `orgAndBelow`; `org` needs `org` or `orgAndBelow`; a `custom`
 * list needs every organisation below its entries in the caller's scope; `self` is never wider.
 * Put BEFORE the writes: judged after them, a caller editing a role they hold would be judged by
 * the scope the write just gave them.
 */
export function scopeWiderThanCaller(caller: number, scope: ScopeValue): RawBuilder<boolean> {
  switch (scope.kind) {
    case 'self':
      return sql<boolean>`0`;
    case 'all':
      return sql<boolean>`NOT ${scopeAll(caller)}`;
    case 'orgAndBelow':
      return sql<boolean>`NOT (${scopeAll(caller)} OR ${hasKind(caller, 'orgAndBelow')})`;
    case 'org':
      return sql<boolean>`NOT (${scopeAll(caller)} OR ${hasKind(caller, 'org')} OR ${hasKind(caller, 'orgAndBelow')})`;
    case 'custom':
      return sql<boolean>`(NOT ${scopeAll(caller)} AND EXISTS (SELECT 1 FROM json_each(${JSON.stringify(scope.orgIds)}) wj
        JOIN org_closure woc ON woc.ancestor_id = wj.value WHERE woc.descendant_id NOT IN ${scopeOrgs(caller)}))`;
  }
}

/** Guard (none for a super admin), before the writes: the scope given is no wider than the caller's own (403 widens_scope). */
export function scopeWidensGuard(auth: Caller, scope: ScopeValue): CompiledQuery[] {
  if (auth.isSuperAdmin || scope.kind === 'self') return [];
  return [guardStatement('widens_scope', scopeWiderThanCaller(auth.userId, scope))];
}

/**
 * "A role belongs to its holders": some user holding one of `roleIds` (SQL list or subquery) is
 * outside `caller`'s data scope. Changing such a role would change that user's powers, i.e. act on
 * someone the caller cannot see. Nobody is outside a scope `all` (userInScope says so at once);
 * the caller's own hold does not count (what they may do to themselves is the other guards' job).
 */
export const roleHeldOutsideScope = (caller: number, roleIds: RawBuilder<unknown>) =>
  sql<boolean>`EXISTS (SELECT 1 FROM user_role hr JOIN users hu ON hu.id = hr.user_id
    WHERE hr.role_id IN ${roleIds} AND hu.id <> ${caller} AND NOT ${userInScope(caller, sql.ref('hu.id'), sql.ref('hu.org_id'))})`;

/** Guard (none for a super admin), before the writes: every holder of the roles is in the caller's scope (403 role_held_outside). */
export function roleHoldersGuard(auth: Caller, roleIds: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('role_held_outside', roleHeldOutsideScope(auth.userId, roleIds))];
}

/**
 * Guard (none for a super admin, none on someone else), before the writes: a caller does not give
 * themselves a role they do not hold yet, nor move themselves to another organisation (403
 * self_grant). The containment guards compare a target with the caller; here the two are one
 * person, and the write would widen the very yardstick it is judged by. Giving a role up, or
 * re-sending the same set or organisation, is fine.
 */
export function selfGrantGuard(auth: Caller, userId: number, change: { roleIds?: readonly number[] | undefined; orgId?: number | null | undefined }): CompiledQuery[] {
  if (auth.isSuperAdmin || userId !== auth.userId) return [];
  const out: CompiledQuery[] = [];
  if (change.roleIds !== undefined && change.roleIds.length > 0) {
    out.push(
      guardStatement(
        'self_grant',
        sql`EXISTS (SELECT 1 FROM json_each(${JSON.stringify(change.roleIds)}) sj WHERE sj.value NOT IN (SELECT sg.role_id FROM user_role sg WHERE sg.user_id = ${userId}))`,
      ),
    );
  }
  if (change.orgId !== undefined) {
    out.push(guardStatement('self_grant', sql`NOT EXISTS (SELECT 1 FROM users sm WHERE sm.id = ${userId} AND sm.org_id IS ${change.orgId})`));
  }
  return out;
}
