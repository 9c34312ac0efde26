import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps';
import { heldMenuIds } from '../access/held';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors';
import type { AuthUser } from '../../core/caller';
import { guardStatement } from '../../db/guards';
import { runPage, whereContains } from '../../core/pagination';
import { SUPER_ADMIN_ROLE } from '../../core/permissions';
import { isoNow } from '../../core/time';
import { guardedWrite, versionGuard } from '../../db/guarded-write';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list';
import { lastSuperAdminGuard } from '../access/super-admin';
import { ROLE_COLUMNS, toRole } from './role.model';
import type { AddRoleInput, EditRoleInput, RolePageInput } from './roles.schemas';

function findRole(deps: Deps, id: number) {
  return deps.db.selectFrom('roles').select(ROLE_COLUMNS).where('id', '=', id).executeTakeFirst();
}

async function requireRole(deps: Deps, id: number) {
  const row = await findRole(deps, id);
  if (!row) throw notFound('Role not found');
  return row;
}

const codeTaken = (code: string) => `code: '${code}' is already taken`;

export async function pageRoles(deps: Deps, req: RolePageInput) {
  const p = req.params;
  let q = deps.db.selectFrom('roles');
  q = whereContains(q, 'roles.name', p.name);
  q = whereContains(q, 'roles.code', p.code);
  if (p.status) q = q.where('roles.status', '=', p.status);
  return runPage(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (qb) => qb.select(ROLE_COLUMNS),
    sortColumns: {
      id: 'roles.id',
      name: 'roles.name',
      code: 'roles.code',
      sort: 'roles.sort',
      createdAt: 'roles.created_at',
      updatedAt: 'roles.updated_at',
    },
    defaultSort: 'createdAt',
    idColumn: 'roles.id',
    map: toRole,
  });
}

/** Every enabled role, in display order, for pickers. */
export async function listRoles(deps: Deps) {
  const rows = await deps.db.selectFrom('roles').select(ROLE_COLUMNS).where('status', '=', 'enabled').orderBy('sort').orderBy('id').execute();
  return rows.map(toRole);
}

export async function roleDetail(deps: Deps, id: number) {
  return toRole(await requireRole(deps, id));
}

export async function addRole(deps: Deps, input: AddRoleInput) {
  const now = isoNow(deps.clock);
  const existing = await deps.db.selectFrom('roles').select('id').where(sql<boolean>`code = ${input.code} COLLATE NOCASE`).executeTakeFirst();
  if (existing) throw conflict(codeTaken(input.code));
  await guardedWrite(
    deps,
    [
      deps.db
        .insertInto('roles')
        .values({
          name: input.name,
          code: input.code,
          sort: input.sort ?? 0,
          status: input.status ?? 'enabled',
          remark: input.remark ?? null,
          created_at: now,
          updated_at: now,
        })
        .compile(),
    ],
    { unique: codeTaken(input.code) },
  );
  // Looked up by code rather than insertId, which a D1 batch result does not promise.
  const row = await deps.db.selectFrom('roles').select(ROLE_COLUMNS).where('code', '=', input.code).executeTakeFirst();
  if (!row) throw notFound('Role not found');
  return toRole(row);
}

/** Partial update under the version check; disabling obeys the super-admin guard. */
export async function editRole(deps: Deps, input: EditRoleInput) {
  const current = await requireRole(deps, input.id);
  if (current.code === SUPER_ADMIN_ROLE && input.code !== undefined && input.code !== current.code) {
    throw badRequest(`code: the code of the built-in ${SUPER_ADMIN_ROLE} role cannot be changed`);
  }
  const set: Record<string, unknown> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.code !== undefined) set.code = input.code;
  if (input.sort !== undefined) set.sort = input.sort;
  if (input.status !== undefined) set.status = input.status;
  if (input.remark !== undefined) set.remark = input.remark;
  const queries: CompiledQuery[] = [
    versionGuard(deps, 'roles', input.id, input.version),
    deps.db
      .updateTable('roles')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(lastSuperAdminGuard(deps));
  await guardedWrite(deps, queries, { unique: codeTaken(input.code ?? '') });
  return toRole(await requireRole(deps, input.id));
}

/**
 * Deletes roles that no user holds (400 otherwise: revoke the role first), with their menu grants.
 * The in-use check is repeated inside the write, so a grant racing the delete cannot be lost.
 */
export async function deleteRoles(deps: Deps, ids: number[]) {
  const { db } = deps;
  const roles = await db.selectFrom('roles').select(['id', 'code']).where('id', 'in', idList(ids)).execute();
  if (roles.some((r) => r.code === SUPER_ADMIN_ROLE)) throw badRequest(`ids: the built-in ${SUPER_ADMIN_ROLE} role cannot be deleted`);
  const held = await db.selectFrom('user_role').select('role_id').distinct().where('role_id', 'in', idList(ids)).orderBy('role_id').execute();
  if (held.length > 0) {
    throw badRequest(`ids: role ${held.map((r) => r.role_id).join(', ')} is still granted to users; revoke it first`);
  }
  await guardedWrite(deps, [
    guardStatement(db, 'role_in_use', sql`EXISTS (SELECT 1 FROM user_role WHERE role_id IN ${idList(ids)})`),
    db.deleteFrom('role_menu').where('role_id', 'in', idList(ids)).compile(),
    db.deleteFrom('roles').where('id', 'in', idList(ids)).where('code', '!=', SUPER_ADMIN_ROLE).compile(),
    lastSuperAdminGuard(deps),
  ]);
}

/** A disabled role grants nothing from the next request on (the auth query checks role status). */
export async function changeRoleStatus(deps: Deps, input: { id: number; status: 'enabled' | 'disabled' }) {
  await requireRole(deps, input.id);
  const queries: CompiledQuery[] = [
    deps.db
      .updateTable('roles')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(lastSuperAdminGuard(deps));
  await guardedWrite(deps, queries);
}

/** Menu ids granted to the user's enabled roles: what a non-super-admin may hand out or take back. */

/**
 * Replaces the role's menus atomically; an unknown menu id fails the whole write (400).
 * Rule: a caller who is not a super admin may only add or remove menus they hold themselves (granted
 * to one of their enabled roles), else 403 naming the menus; so sys:role:grantMenu cannot hand out
 * a code (e.g. sys:user:grantRole) its holder lacks. Their write also touches only held menus, so a
 * grant changing meanwhile cannot widen it.
 */
export async function grantMenus(deps: Deps, auth: AuthUser, input: { roleId: number; menuIds: number[] }) {
  const { db } = deps;
  await requireRole(deps, input.roleId);
  const unknownMenus = async () => badRequest(unknownIdsMessage('menuIds', 'menu', await missingIds(deps, 'menus', input.menuIds)));
  const queries: CompiledQuery[] = [];
  if (auth.isSuperAdmin) {
    queries.push(db.deleteFrom('role_menu').where('role_id', '=', input.roleId).compile());
    if (input.menuIds.length > 0) {
      queries.push(
        sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${JSON.stringify(input.menuIds)})`.compile(db),
      );
    }
  } else {
    if ((await missingIds(deps, 'menus', input.menuIds)).length > 0) throw await unknownMenus();
    const current = (await db.selectFrom('role_menu').select('menu_id').where('role_id', '=', input.roleId).execute()).map((r) => r.menu_id);
    const wanted = new Set(input.menuIds);
    const changed = [...input.menuIds.filter((id) => !current.includes(id)), ...current.filter((id) => !wanted.has(id))];
    const held = new Set(
      changed.length === 0
        ? []
        : (await db.selectFrom('menus').select('id').where('id', 'in', idList(changed)).where('id', 'in', heldMenuIds(auth.userId)).execute()).map((r) => r.id),
    );
    const notHeld = [...new Set(changed.filter((id) => !held.has(id)))].sort((a, b) => a - b);
    if (notHeld.length > 0) {
      const shown = notHeld.slice(0, 10).join(', ');
      const more = notHeld.length > 10 ? `, … (${notHeld.length} in all)` : '';
      throw forbidden(`menuIds: you can only grant or revoke menus you hold yourself; not held: menu${notHeld.length === 1 ? '' : 's'} ${shown}${more}`);
    }
    const list = JSON.stringify(input.menuIds);
    queries.push(
      sql`DELETE FROM role_menu WHERE role_id = ${input.roleId} AND menu_id NOT IN (SELECT value FROM json_each(${list}))
        AND menu_id IN ${heldMenuIds(auth.userId)}`.compile(db),
    );
    if (input.menuIds.length > 0) {
      queries.push(
        sql`INSERT OR IGNORE INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${list})
          WHERE value IN ${heldMenuIds(auth.userId)}`.compile(db),
      );
    }
  }
  await guardedWrite(deps, queries, {
    foreignKey: async () => {
      if (!(await findRole(deps, input.roleId))) return notFound('Role not found');
      return unknownMenus();
    },
  });
}

export async function ownMenus(deps: Deps, id: number): Promise<number[]> {
  await requireRole(deps, id);
  const rows = await deps.db.selectFrom('role_menu').select('menu_id').where('role_id', '=', id).orderBy('menu_id').execute();
  return rows.map((r) => r.menu_id);
}
