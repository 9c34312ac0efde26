import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps.ts';
import { callerHolds, changedMenusHeldGuard, heldMenuIds, holdsGuard } from '../access/held.ts';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import type { AuthUser } from '../../core/caller.ts';
import { guardStatement } from '../../db/guards.ts';
import { readAll } from '../../db/read-all.ts';
import { runPage, whereContains } from '../../core/pagination.ts';
import { SUPER_ADMIN_ROLE } from '../../core/permissions.ts';
import { isoNow } from '../../core/time.ts';
import { versionGuard } from '../../db/guarded-write.ts';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list.ts';
import { lastSuperAdminGuard } from '../access/super-admin.ts';
import { ROLE_SELECT, scopeOrgIdsOf, toRole, type RoleRow } from './role.model.ts';
import type { AddRoleInput, EditRoleInput, GrantDataScopeInput, RolePageInput } from './roles.schemas.ts';
import { accessWrite, explainedWrite } from '../access/access-write.ts';
import { roleAuthorityGuard } from '../access/containment.ts';
import type { DataScopeKind } from '../../db/schema.ts';

function findRole(deps: Deps, id: number) {
  return deps.db.selectFrom('roles').select(ROLE_SELECT).where('id', '=', id).executeTakeFirst();
}

async function requireRole(deps: Deps, id: number) {
  const row = await findRole(deps, id);
  if (!row) throw notFound('Role not found');
  return row;
}

const codeTaken = (code: string) => `code: '${code}' is already taken`;

/** Guard: the role exists (else the batch fails with 404 "Role not found", the out_of_scope answer). */
const roleExistsGuard = (deps: Deps, id: number) => guardStatement(deps.db, 'out_of_scope', sql`NOT EXISTS (SELECT 1 FROM roles WHERE id = ${id})`);

/** The role's record as a write batch's last statement: its answer, read by the batch itself. */
const roleRowQuery = (deps: Deps, where: { id: number } | { code: string }) =>
  ('id' in where ? deps.db.selectFrom('roles').select(ROLE_SELECT).where('id', '=', where.id) : deps.db.selectFrom('roles').select(ROLE_SELECT).where('code', '=', where.code)).compile();

/** The record the last statement of a write batch read. */
function lastRole(results: { rows: unknown[] }[]) {
  const row = results.at(-1)?.rows[0] as RoleRow | undefined;
  if (!row) throw notFound('Role not found');
  return roleRecord(row);
}

/** Roles as records: their custom-scope organisations came with them (ROLE_SELECT), no second query. */
function withScopes(rows: (RoleRow | undefined)[]) {
  return rows.filter((r): r is RoleRow => r !== undefined).map((r) => toRole(r, scopeOrgIdsOf(r)));
}

const roleRecord = (row: RoleRow) => withScopes([row])[0]!;

/** One 403 for every write on a role outside the caller's authority (codes or data scope). */
const ROLE_OUTSIDE = 'Refused: outside your authority (the role carries a permission or a data scope that you do not hold)';

/** Validated data-scope values: scopeOrgIds belong to `custom` only. */
function scopeValues(dataScope: DataScopeKind, scopeOrgIds: number[] | undefined): number[] {
  const list = scopeOrgIds ?? [];
  if (dataScope !== 'custom' && list.length > 0) throw badRequest('scopeOrgIds: only a `custom` data scope lists organisations');
  return list;
}

/** Statements that replace a role's scope (an unknown org fails the batch on its foreign key). */
function scopeStatements(deps: Deps, roleId: number | ReturnType<typeof sql>, dataScope: DataScopeKind, orgIds: number[]): CompiledQuery[] {
  const { db } = deps;
  const out: CompiledQuery[] = [
    sql`UPDATE roles SET data_scope = ${dataScope} WHERE id = ${roleId}`.compile(db),
    sql`DELETE FROM role_scope_org WHERE role_id = ${roleId}`.compile(db),
  ];
  if (orgIds.length > 0) {
    out.push(sql`INSERT INTO role_scope_org (role_id, org_id) SELECT ${roleId}, value FROM json_each(${JSON.stringify(orgIds)}) WHERE ${roleId} IS NOT NULL`.compile(db));
  }
  return out;
}

const unknownOrgs = (deps: Deps, orgIds: number[]) => async () => {
  const found = new Set((await deps.db.selectFrom('orgs').select('id').where('id', 'in', idList(orgIds)).execute()).map((r) => r.id));
  return badRequest(unknownIdsMessage('scopeOrgIds', 'organisation', orgIds.filter((id) => !found.has(id))));
};

async function requireCode(deps: Deps, auth: AuthUser, code: 'sys:role:changeStatus' | 'sys:role:grantDataScope', field: string) {
  if (!(await callerHolds(deps, auth, code))) throw forbidden(`${field}: changing it also requires the permission ${code}`);
}

export async function pageRoles(deps: Deps, req: RolePageInput) {
  const p = req.params;
  let q = deps.db.selectFrom('roles');
  q = whereContains(q, 'roles.name', p.name);
  q = whereContains(q, 'roles.code', p.code);
  if (p.status) q = q.where('roles.status', '=', p.status);
  return runPage(deps.readMany, req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (qb) => qb.select(ROLE_SELECT),
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
    map: (r) => r,
  }).then(async (page) => ({ ...page, records: withScopes(page.records) }));
}

/** Every enabled role, in display order, for pickers. */
export async function listRoles(deps: Deps) {
  const rows = await deps.db.selectFrom('roles').select(ROLE_SELECT).where('status', '=', 'enabled').orderBy('sort').orderBy('id').execute();
  return withScopes(rows);
}

export async function roleDetail(deps: Deps, id: number) {
  return roleRecord(await requireRole(deps, id));
}

/**
 * Adds a role; its data scope defaults to `self`. Choosing one (dataScope/scopeOrgIds) also needs
 * sys:role:grantDataScope, and a scope wider than the caller's own is refused (403) inside the write.
 */
export async function addRole(deps: Deps, auth: AuthUser, input: AddRoleInput) {
  const now = isoNow(deps.clock);
  if (input.dataScope !== undefined || input.scopeOrgIds !== undefined) await requireCode(deps, auth, 'sys:role:grantDataScope', 'dataScope');
  const dataScope = input.dataScope ?? 'self';
  const orgIds = scopeValues(dataScope, input.scopeOrgIds);
  // A taken code is answered by the unique index (409) when the batch runs: no read before; the
  // new record is read back by the batch's last statement (looked up by code: a D1 batch result
  // does not promise insertId).
  const newId = sql`(SELECT nr.id FROM roles nr WHERE nr.code = ${input.code})`;
  const results = await accessWrite(
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
          data_scope: dataScope,
          created_at: now,
          updated_at: now,
        })
        .compile(),
      ...(orgIds.length > 0 ? scopeStatements(deps, newId, dataScope, orgIds) : []),
      ...roleAuthorityGuard(deps, auth, sql`(SELECT ${newId})`),
      roleRowQuery(deps, { code: input.code }),
    ],
    { unique: codeTaken(input.code), foreignKey: unknownOrgs(deps, orgIds), outsideAuthority: ROLE_OUTSIDE },
  );
  return lastRole(results);
}

/**
 * Partial update under the version check; disabling obeys the super-admin guard. `status` also
 * needs sys:role:changeStatus, dataScope/scopeOrgIds sys:role:grantDataScope (403). Containment:
 * the role, before and after, carries no code or data scope the caller lacks (403, in the write).
 */
export async function editRole(deps: Deps, auth: AuthUser, input: EditRoleInput) {
  const scoping = input.dataScope !== undefined || input.scopeOrgIds !== undefined;
  // The current row is read first only when the edit depends on it (a scope change, a new code);
  // otherwise existence and the status code are guards of the batch, which reads its answer back
  // (2 round trips with auth), and the checks run only to explain a refusal (explainedWrite).
  const readFirst = scoping || input.code !== undefined;
  const checks = async () => {
    const current = await requireRole(deps, input.id);
    if (input.status !== undefined) await requireCode(deps, auth, 'sys:role:changeStatus', 'status');
    return current;
  };
  const current = readFirst ? await checks() : undefined;
  if (scoping) await requireCode(deps, auth, 'sys:role:grantDataScope', 'dataScope');
  const dataScope = input.dataScope ?? current?.data_scope ?? 'self';
  const orgIds = scoping ? scopeValues(dataScope, input.scopeOrgIds ?? (dataScope === 'custom' && current ? scopeOrgIdsOf(current) : [])) : [];
  if (current?.code === SUPER_ADMIN_ROLE && input.code !== undefined && input.code !== current.code) {
    throw badRequest(`code: the code of the built-in ${SUPER_ADMIN_ROLE} role cannot be changed`);
  }
  const set: Record<string, unknown> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.code !== undefined) set.code = input.code;
  if (input.sort !== undefined) set.sort = input.sort;
  if (input.status !== undefined) set.status = input.status;
  if (input.remark !== undefined) set.remark = input.remark;
  const target = sql`(SELECT ${input.id})`;
  const queries: CompiledQuery[] = [
    roleExistsGuard(deps, input.id),
    ...(input.status !== undefined ? holdsGuard(deps, auth, 'sys:role:changeStatus') : []),
    ...roleAuthorityGuard(deps, auth, target),
    versionGuard(deps, 'roles', input.id, input.version),
    deps.db
      .updateTable('roles')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (scoping) queries.push(...scopeStatements(deps, input.id, dataScope, orgIds), ...roleAuthorityGuard(deps, auth, target));
  if (input.status === 'disabled') queries.push(lastSuperAdminGuard(deps));
  queries.push(roleRowQuery(deps, { id: input.id }));
  const write = () =>
    accessWrite(deps, queries, { unique: codeTaken(input.code ?? ''), foreignKey: unknownOrgs(deps, orgIds), outOfScope: 'Role not found', outsideAuthority: ROLE_OUTSIDE });
  return lastRole(readFirst ? await write() : await explainedWrite(write, checks));
}

/**
 * Sets a role's data scope (own code sys:role:grantDataScope). The role before, and the scope
 * given, must lie within the caller's own scope: nobody hands out a wider scope than they have (403).
 */
export async function grantDataScope(deps: Deps, auth: AuthUser, input: GrantDataScopeInput) {
  // Existence is a guard of the batch (404 first, as the read before it answered; an invalid
  // scope list of an unknown role is still that 404).
  let orgIds: number[];
  try {
    orgIds = scopeValues(input.dataScope, input.scopeOrgIds);
  } catch (err) {
    await requireRole(deps, input.roleId);
    throw err;
  }
  const target = sql`(SELECT ${input.roleId})`;
  await accessWrite(
    deps,
    [
      roleExistsGuard(deps, input.roleId),
      ...roleAuthorityGuard(deps, auth, target),
      ...scopeStatements(deps, input.roleId, input.dataScope, orgIds),
      sql`UPDATE roles SET version = version + 1, updated_at = ${isoNow(deps.clock)} WHERE id = ${input.roleId}`.compile(deps.db),
      ...roleAuthorityGuard(deps, auth, target),
    ],
    {
      outOfScope: 'Role not found',
      outsideAuthority: 'dataScope: you cannot give a role a data scope wider than your own, nor change a role that carries a permission or a scope you do not hold',
      foreignKey: async () => ((await findRole(deps, input.roleId)) ? unknownOrgs(deps, orgIds)() : notFound('Role not found')),
    },
  );
}

/**
 * Deletes roles that no user holds (400 otherwise: revoke the role first), with their menu grants.
 * The in-use check is repeated inside the write, so a grant racing the delete cannot be lost.
 */
export async function deleteRoles(deps: Deps, auth: AuthUser, ids: number[]) {
  const { db } = deps;
  // The checks' rules are guards of the batch (400 with role_in_use's answer); the checks run only
  // to explain a refusal with their precise message (explainedWrite).
  const checks = async () => {
    const roles = await db.selectFrom('roles').select(['id', 'code']).where('id', 'in', idList(ids)).execute();
    if (roles.some((r) => r.code === SUPER_ADMIN_ROLE)) throw badRequest(`ids: the built-in ${SUPER_ADMIN_ROLE} role cannot be deleted`);
    const held = await db.selectFrom('user_role').select('role_id').distinct().where('role_id', 'in', idList(ids)).orderBy('role_id').execute();
    if (held.length > 0) {
      throw badRequest(`ids: role ${held.map((r) => r.role_id).join(', ')} is still granted to users; revoke it first`);
    }
  };
  const write = () =>
    accessWrite(deps, [
      guardStatement(db, 'role_in_use', sql`EXISTS (SELECT 1 FROM roles WHERE id IN ${idList(ids)} AND code = ${SUPER_ADMIN_ROLE})`),
      guardStatement(db, 'role_in_use', sql`EXISTS (SELECT 1 FROM user_role WHERE role_id IN ${idList(ids)})`),
      ...roleAuthorityGuard(deps, auth, idList(ids)),
      db.deleteFrom('role_menu').where('role_id', 'in', idList(ids)).compile(),
      db.deleteFrom('roles').where('id', 'in', idList(ids)).where('code', '!=', SUPER_ADMIN_ROLE).compile(),
      lastSuperAdminGuard(deps),
    ], { outsideAuthority: ROLE_OUTSIDE });
  await explainedWrite(write, checks);
}

/** A disabled role grants nothing from the next request on (the auth query checks role status). */
export async function changeRoleStatus(deps: Deps, auth: AuthUser, input: { id: number; status: 'enabled' | 'disabled' }) {
  const queries: CompiledQuery[] = [
    roleExistsGuard(deps, input.id),
    ...roleAuthorityGuard(deps, auth, sql`(SELECT ${input.id})`),
    deps.db
      .updateTable('roles')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(lastSuperAdminGuard(deps));
  await accessWrite(deps, queries, { outOfScope: 'Role not found', outsideAuthority: ROLE_OUTSIDE });
}

/** Menu ids granted to the user's enabled roles: what a non-super-admin may hand out or take back. */

/**
 * Replaces the role's menus atomically; an unknown menu id fails the whole write (400).
 * Rule: a caller who is not a super admin may only add or remove menus they hold themselves (granted
 * to one of their enabled roles), else 403 naming the menus; so sys:role:grantMenu cannot hand out
 * a code (e.g. sys:user:grantRole) its holder lacks. A guard in the write's batch judges the rule
 * again (403, nothing changed), so a revoke of the caller's menus landing meanwhile cannot widen it.
 */
export async function grantMenus(deps: Deps, auth: AuthUser, input: { roleId: number; menuIds: number[] }) {
  const { db } = deps;
  const unknownMenus = async () => badRequest(unknownIdsMessage('menuIds', 'menu', await missingIds(deps, 'menus', input.menuIds)));
  const target = sql`(SELECT ${input.roleId})`;
  const list = JSON.stringify(input.menuIds);
  // One batch, every check a guard in it, in the order the answers take: the role exists (404),
  // the menus exist (400: a foreign-key failure), a delegated admin holds every menu they add or
  // remove at that moment (403, changedMenusHeldGuard), the role is within their authority (403).
  // Then the write, and the authority again after it.
  const queries: CompiledQuery[] = [guardStatement(db, 'out_of_scope', sql`NOT EXISTS (SELECT 1 FROM roles WHERE id = ${input.roleId})`)];
  if (!auth.isSuperAdmin) {
    queries.push(
      // Inserts a row only for a menu that does not exist: its foreign key fails the batch (400).
      sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${list})
        WHERE value NOT IN (SELECT id FROM menus)`.compile(db),
      ...changedMenusHeldGuard(deps, auth, input.roleId, input.menuIds),
    );
  }
  queries.push(...roleAuthorityGuard(deps, auth, target));
  queries.push(db.deleteFrom('role_menu').where('role_id', '=', input.roleId).compile());
  if (input.menuIds.length > 0) {
    queries.push(sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${list})`.compile(db));
  }
  queries.push(...roleAuthorityGuard(deps, auth, target));
  try {
    await accessWrite(deps, queries, {
      outsideAuthority: `${ROLE_OUTSIDE.slice(0, -1)}, or menuIds changes menus that you no longer hold)`,
      outOfScope: 'Role not found',
      foreignKey: async () => {
        if (!(await findRole(deps, input.roleId))) return notFound('Role not found');
        return unknownMenus();
      },
    });
  } catch (err) {
    // Which 403: menus the caller does not hold are named (read now; the failed batch changed nothing).
    if (!auth.isSuperAdmin && err instanceof AppError && err.code === 'FORBIDDEN') throw (await notHeldError(deps, auth, input)) ?? err;
    throw err;
  }
}

/** The 403 naming the menus a delegated admin would add or remove without holding them, if any. */
async function notHeldError(deps: Deps, auth: AuthUser, input: { roleId: number; menuIds: number[] }) {
  const { db } = deps;
  const current = (await db.selectFrom('role_menu').select('menu_id').where('role_id', '=', input.roleId).execute()).map((r) => r.menu_id);
  const wanted = new Set(input.menuIds);
  const changed = [...input.menuIds.filter((id) => !current.includes(id)), ...current.filter((id) => !wanted.has(id))];
  if (changed.length === 0) return undefined;
  const held = new Set(
    (await db.selectFrom('menus').select('id').where('id', 'in', idList(changed)).where('id', 'in', heldMenuIds(auth.userId)).execute()).map((r) => r.id),
  );
  const notHeld = [...new Set(changed.filter((id) => !held.has(id)))].sort((a, b) => a - b);
  if (notHeld.length === 0) return undefined;
  const shown = notHeld.slice(0, 10).join(', ');
  const more = notHeld.length > 10 ? `, … (${notHeld.length} in all)` : '';
  return forbidden(`menuIds: you can only grant or revoke menus you hold yourself; not held: menu${notHeld.length === 1 ? '' : 's'} ${shown}${more}`);
}

export async function ownMenus(deps: Deps, id: number): Promise<number[]> {
  // The role and its menus in one read (one round trip with the auth row on D1).
  const [role, rows] = await readAll(deps, [
    deps.db.selectFrom('roles').select('id').where('id', '=', id),
    deps.db.selectFrom('role_menu').select('menu_id').where('role_id', '=', id).orderBy('menu_id'),
  ]);
  if (role.length === 0) throw notFound('Role not found');
  return rows.map((r) => r.menu_id);
}
