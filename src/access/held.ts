import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { forbidden } from '../core/errors.ts';
import { SUPER_ADMIN_ROLE, type PermissionCode } from '../core/permissions.ts';
import { qb } from '../db/compile.ts';
import { guardStatement } from '../db/guards.ts';
import { idList, idsShown } from '../db/id-list.ts';
import type { Runner } from '../db/runner.ts';
import { holdsCodeSql } from './holds-code.ts';

const HOLDS_SQL = `SELECT ${holdsCodeSql('+?')} AS has_perm`;

/** HOLDS_SQL, or a super admin (?2 the user): usable before the caller's auth row is known. */
const HOLDS_OR_SUPER_SQL = `SELECT (${holdsCodeSql('+?2')} OR EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id
  WHERE ur.user_id = +?2 AND r.status = 'enabled' AND r.code = '${SUPER_ADMIN_ROLE}')) AS has_perm`;

/**
 * callerHolds as a statement for a read batch (heldBy reads its rows), so that a read needing it
 * costs no round trip of its own: on a plain-read route it travels with the auth row.
 */
export function holdsStatement(userId: number, code: PermissionCode) {
  return { sql: HOLDS_OR_SUPER_SQL, parameters: [code, userId] };
}

/** The answer of a holdsStatement's rows. */
export const heldBy = (rows: readonly unknown[] | undefined) => (rows?.[0] as { has_perm?: number } | undefined)?.has_perm === 1;

/**
 * Whether the caller holds `code` right now (one query, the same rule as the route check); a
 * super admin holds every code. For operations whose optional fields need a second code, e.g.
 * sysUser/edit with roleIds (sys:user:grantRole) or status (sys:user:changeStatus).
 */
export async function callerHolds(run: Runner, code: PermissionCode): Promise<boolean> {
  const auth = await run.caller();
  if (auth.isSuperAdmin) return true;
  const row = await run.first<{ has_perm: number }>({ sql: HOLDS_SQL, parameters: [code, auth.userId] });
  return row?.has_perm === 1;
}

/** The menus a user holds: those granted to one of their enabled roles (a subquery). */
export const heldMenuIds = (userId: number) =>
  sql<number>`(SELECT rm.menu_id FROM role_menu rm JOIN user_role ur ON ur.role_id = rm.role_id
    JOIN roles r ON r.id = rm.role_id AND r.status = 'enabled' WHERE ur.user_id = ${userId})`;

/**
 * Guard (none for a super admin) for grantMenu's rule "a delegated admin adds or removes only menus
 * they hold", judged inside the write's batch, before its writes: a menu of `menuIds` the role
 * lacks, or a menu of the role missing from `menuIds`, that the caller does not hold at that moment
 * fails the batch (403 outside_authority, nothing changed). So a revoke racing the request cannot
 * slip between the early check and the write, also for menus without a code, which the containment
 * guard (codes only) would not see.
 */
export function changedMenusHeldGuard(auth: Caller, roleId: number, menuIds: readonly number[]): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  const list = JSON.stringify(menuIds);
  const held = heldMenuIds(auth.userId);
  return [
    guardStatement(
      'outside_authority',
      sql`(EXISTS (SELECT 1 FROM json_each(${list}) gj WHERE gj.value NOT IN (SELECT grm.menu_id FROM role_menu grm WHERE grm.role_id = ${roleId})
          AND gj.value NOT IN ${held})
        OR EXISTS (SELECT 1 FROM role_menu grm WHERE grm.role_id = ${roleId} AND grm.menu_id NOT IN (SELECT value FROM json_each(${list}))
          AND grm.menu_id NOT IN ${held}))`,
    ),
  ];
}

/**
 * Rule: a caller who is not a super admin may only grant or revoke roles all of whose menus they
 * hold themselves, so sys:user:grantRole cannot hand out more than its holder has (the same rule
 * grantMenu applies to menus). `changed` are the roles added or removed. 403 names the roles.
 */
export async function assertMayGrantRoles(run: Runner, auth: Caller, changed: readonly number[]) {
  if (auth.isSuperAdmin || changed.length === 0) return;
  const rows = await run.rows<{ role_id: number }>(
    qb
      .selectFrom('role_menu')
      .select('role_id')
      .distinct()
      .where('role_id', 'in', idList(changed))
      .where('menu_id', 'not in', heldMenuIds(auth.userId))
      .orderBy('role_id')
      .compile(),
  );
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.role_id);
  throw forbidden(
    `roleIds: you can only grant or revoke roles whose menus you hold yourself; not allowed: role${ids.length === 1 ? '' : 's'} ${idsShown(ids)}`,
  );
}

/**
 * Guard (none for a super admin) for assertMayGrantRoles's rule, inside the write's batch before its
 * grants: a role added to or removed from `user`'s set (`user` an SQL value; NULL for a user not
 * written yet, who holds nothing) that carries a menu the caller does not hold fails the batch.
 */
export function changedRolesHeldGuard(auth: Caller, user: RawBuilder<unknown>, roleIds: readonly number[]): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  const list = JSON.stringify(roleIds);
  const current = sql`(SELECT gur.role_id FROM user_role gur WHERE gur.user_id = ${user})`;
  return [
    guardStatement(
      'outside_authority',
      sql`EXISTS (SELECT 1 FROM role_menu grm WHERE grm.menu_id NOT IN ${heldMenuIds(auth.userId)} AND grm.role_id IN (
        SELECT gj.value FROM json_each(${list}) gj WHERE gj.value NOT IN ${current}
        UNION ALL SELECT gc.role_id FROM user_role gc WHERE gc.user_id = ${user} AND gc.role_id NOT IN (SELECT value FROM json_each(${list}))))`,
    ),
  ];
}

/**
 * Guard (none for a super admin): the caller holds `code` when the batch runs (what callerHolds
 * answers early). For a field that does another operation's job (403 code_required): put it
 * before the writes.
 */
export function holdsGuard(auth: Caller, code: PermissionCode): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [guardStatement('code_required', sql`NOT ${sql.raw(holdsCodeSql(String(Number(auth.userId)), `'${code.replaceAll("'", "''")}'`))}`)];
}

/**
 * "Menus carry codes": guard (none for a super admin), before the writes, that every menu among
 * `menuIds` (SQL list or subquery) carrying a code carries one the caller holds right now, through
 * an enabled role and an enabled menu (403 menu_code_not_held). A disabled menu's code is held by
 * nobody, so only a super admin switches a disabled code back on; a menu without a code is any
 * holder's of the operation.
 */
export function menuCodesHeldGuard(auth: Caller, menuIds: RawBuilder<unknown>): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  return [
    guardStatement(
      'menu_code_not_held',
      sql`EXISTS (SELECT 1 FROM menus hm WHERE hm.id IN ${menuIds} AND hm.permission IS NOT NULL
        AND NOT ${sql.raw(holdsCodeSql(String(Number(auth.userId)), 'hm.permission'))})`,
    ),
  ];
}

/** Roles added or removed when a user's set becomes `next`. */
export async function changedRoles(run: Runner, userId: number, next: readonly number[]): Promise<number[]> {
  const current = (await run.rows<{ role_id: number }>(qb.selectFrom('user_role').select('role_id').where('user_id', '=', userId).compile())).map((r) => r.role_id);
  const a = new Set(current);
  const b = new Set(next);
  return [...current.filter((id) => !b.has(id)), ...next.filter((id) => !a.has(id))];
}
