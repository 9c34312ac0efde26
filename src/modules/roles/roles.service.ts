import { sql, type CompiledQuery } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import type { Caller } from '../../core/caller.ts';
import { callerHolds, changedMenusHeldGuard, heldMenuIds, holdsGuard } from '../../access/held.ts';
import { badRequest, forbidden, notFound } from '../../core/errors.ts';
import { guardStatement, versionGuard } from '../../db/guards.ts';
import { pageStatements, whereContains } from '../../core/pagination.ts';
import { SUPER_ADMIN_ROLE } from '../../core/permissions.ts';
import { isoNow } from '../../core/time.ts';
import { prepare, qb } from '../../db/compile.ts';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list.ts';
import { writeOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { lastSuperAdminGuard } from '../../access/super-admin.ts';
import { ROLE_SELECT, scopeOrgIdsOf, toRole, type RoleRow } from './role.model.ts';
import type { AddRoleInput, EditRoleInput, GrantDataScopeInput, RolePageInput } from './roles.schemas.ts';
import { roleAuthorityGuard, roleHoldersGuard, scopeWidensGuard } from '../../access/containment.ts';
import type { DataScopeKind } from '../../db/schema.ts';

/** A role by id: compiled once, bound per request (detail reads and the checks of writes). */
const ROLE_BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('roles').select(ROLE_SELECT).where('id', '=', p.id));
/** A role's existence and its menus, for ownMenu (one read). */
const ROLE_EXISTS = prepare<{ id: number }>((p) => qb.selectFrom('roles').select('id').where('id', '=', p.id));
const ROLE_MENUS = prepare<{ id: number }>((p) => qb.selectFrom('role_menu').select('menu_id').where('role_id', '=', p.id).orderBy('menu_id'));

function findRole(run: Runner, id: number) {
  return run.first<RoleRow>(ROLE_BY_ID.bind({ id }));
}

async function requireRole(run: Runner, id: number) {
  const row = await findRole(run, id);
  if (!row) throw notFound('Role not found');
  return row;
}

const codeTaken = (code: string) => `code: '${code}' is already taken`;

/** Guard: the role exists (else the batch fails with 404 "Role not found", the out_of_scope answer). */
const roleExistsGuard = (id: number) => guardStatement('out_of_scope', sql`NOT EXISTS (SELECT 1 FROM roles WHERE id = ${id})`);

/** The role's record as a write batch's last statement: its answer, read by the batch itself. */
const roleRowQuery = (where: { id: number } | { code: string }) =>
  ('id' in where ? qb.selectFrom('roles').select(ROLE_SELECT).where('id', '=', where.id) : qb.selectFrom('roles').select(ROLE_SELECT).where('code', '=', where.code)).compile();

/** The record the last statement of a write batch read. */
function lastRole(results: readonly { rows: unknown[] }[]) {
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
function scopeStatements(roleId: number | ReturnType<typeof sql>, dataScope: DataScopeKind, orgIds: number[]): CompiledQuery[] {
  const out: CompiledQuery[] = [
    sql`UPDATE roles SET data_scope = ${dataScope} WHERE id = ${roleId}`.compile(qb),
    sql`DELETE FROM role_scope_org WHERE role_id = ${roleId}`.compile(qb),
  ];
  if (orgIds.length > 0) {
    out.push(sql`INSERT INTO role_scope_org (role_id, org_id) SELECT ${roleId}, value FROM json_each(${JSON.stringify(orgIds)}) WHERE ${roleId} IS NOT NULL`.compile(qb));
  }
  return out;
}

const unknownOrgs = (run: Runner, orgIds: number[]) => async () =>
  badRequest(unknownIdsMessage('scopeOrgIds', 'organisation', await missingIds(run, 'orgs', orgIds)));

async function requireCode(run: Runner, code: 'sys:role:changeStatus' | 'sys:role:grantDataScope' | 'sys:role:requireMfa' | 'sys:role:grantMenu', field: string) {
  if (!(await callerHolds(run, code))) throw forbidden(`${field}: changing it also requires the permission ${code}`);
}

/** code_required's answer when the field is dataScope/scopeOrgIds (the early check's, for a refusal that raced it). */
const GRANT_DATA_SCOPE_NEEDED = 'dataScope: changing it also requires the permission sys:role:grantDataScope';
/** code_required's answer when the field is mfaRequired. */
const REQUIRE_MFA_NEEDED = 'mfaRequired: setting it also requires the permission sys:role:requireMfa';
/** code_required's answer when a new role comes with menus (addRole's `grant`). */
const GRANT_MENU_NEEDED = 'menuIds: granting menus also requires the permission sys:role:grantMenu';

/** The rows a page of roles selects for `params` (FROM and WHERE only), for anything that must select the same rows. */
export function roleFilter(p: RolePageInput['params']) {
  let q = qb.selectFrom('roles');
  q = whereContains(q, 'roles.name', p.name);
  q = whereContains(q, 'roles.code', p.code);
  if (p.status) q = q.where('roles.status', '=', p.status);
  return q;
}

/**
 * A role's granted menu ids as a JSON list, a column of its own row (one round trip for the page):
 * for clients whose role list carries the grants (the vben dialect's `permissions`).
 */
const MENU_IDS = sql<string>`(SELECT json_group_array(m.menu_id) FROM (SELECT rm.menu_id FROM role_menu rm WHERE rm.role_id = roles.id ORDER BY rm.menu_id) m)`.as('menu_ids');

/** A page of roles; with `menuIds`, each record also carries the ids of the menus it is granted. */
export function pageRoles(deps: Ports, run: Runner, req: RolePageInput, opts: { menuIds?: boolean } = {}) {
  const q = roleFilter(req.params);
  const page = pageStatements(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered: q,
    select: (qb) => (opts.menuIds ? qb.select([...ROLE_SELECT, MENU_IDS]) : qb.select(ROLE_SELECT)),
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
  });
  return run.read({
    reads: page.statements,
    finish: (rows) => {
      const found = page.finish(rows);
      const records = withScopes(found.records);
      if (!opts.menuIds) return { ...found, records };
      const grants = found.records.map((r) => JSON.parse((r as { menu_ids?: string }).menu_ids ?? '[]') as number[]);
      return { ...found, records: records.map((r, i) => ({ ...r, menuIds: grants[i] ?? [] })) };
    },
  });
}

/** Every enabled role, in display order, for pickers. */
export async function listRoles(run: Runner) {
  return withScopes(await run.rows<RoleRow>(qb.selectFrom('roles').select(ROLE_SELECT).where('status', '=', 'enabled').orderBy('sort').orderBy('id').compile()));
}

export async function roleDetail(run: Runner, id: number) {
  return roleRecord(await requireRole(run, id));
}

/**
 * Adds a role; its data scope defaults to `self`. Choosing one (dataScope/scopeOrgIds) also needs
 * sys:role:grantDataScope, and a scope wider than the caller's own is refused (403) inside the write.
 */
/**
 * `grant` (the vben dialect, whose role form creates a role with its menus in one call): the role
 * is created with these menus in the same batch, under grantMenu's rules: the caller also holds
 * sys:role:grantMenu, a delegated admin grants only menus they hold, the role ends within their
 * authority (403), an unknown menu is 400; refused, nothing is created.
 */
export async function addRole(deps: Ports, run: Runner, input: AddRoleInput, grant?: { menuIds: readonly number[] }) {
  const auth = await run.caller();
  const now = isoNow(deps.clock);
  if (input.dataScope !== undefined || input.scopeOrgIds !== undefined) await requireCode(run, 'sys:role:grantDataScope', 'dataScope');
  if (input.mfaRequired !== undefined) await requireCode(run, 'sys:role:requireMfa', 'mfaRequired');
  const menuIds = grant?.menuIds ?? [];
  const granting = menuIds.length > 0;
  if (granting) await requireCode(run, 'sys:role:grantMenu', 'menuIds');
  const menuList = JSON.stringify(menuIds);
  const dataScope = input.dataScope ?? 'self';
  const orgIds = scopeValues(dataScope, input.scopeOrgIds);
  // A taken code is answered by the unique index (409) when the batch runs: no read before; the
  // new record is read back by the batch's last statement (looked up by code: a D1 batch result
  // does not promise insertId).
  const newId = sql`(SELECT nr.id FROM roles nr WHERE nr.code = ${input.code})`;
  const scoping = input.dataScope !== undefined || input.scopeOrgIds !== undefined;
  return run.write({
    batch: [
      // Before the insert: the caller holds the field's code, and the scope given is no wider
      // than theirs as it stands (a new role carries no menu yet: its scope is all it carries).
      ...(scoping ? holdsGuard(auth, 'sys:role:grantDataScope') : []),
      ...(input.mfaRequired !== undefined ? holdsGuard(auth, 'sys:role:requireMfa') : []),
      ...(granting ? holdsGuard(auth, 'sys:role:grantMenu') : []),
      // grantMenu's rule for a role that has no menu yet: every menu given is one the caller holds.
      ...(granting && !auth.isSuperAdmin
        ? [guardStatement('outside_authority', sql`EXISTS (SELECT 1 FROM json_each(${menuList}) gj WHERE gj.value NOT IN ${heldMenuIds(auth.userId)})`)]
        : []),
      ...scopeWidensGuard(auth, { kind: dataScope, orgIds }),
      qb
        .insertInto('roles')
        .values({
          name: input.name,
          code: input.code,
          sort: input.sort ?? 0,
          status: input.status ?? 'enabled',
          remark: input.remark ?? null,
          data_scope: dataScope,
          mfa_required: input.mfaRequired ? 1 : 0,
          created_at: now,
          updated_at: now,
        })
        .compile(),
      ...(orgIds.length > 0 ? scopeStatements(newId, dataScope, orgIds) : []),
      // An unknown menu fails the batch on role_menu's foreign key (400).
      ...(granting ? [sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${newId}, value FROM json_each(${menuList})`.compile(qb)] : []),
      ...(granting ? roleAuthorityGuard(auth, newId) : []),
      roleRowQuery({ code: input.code }),
    ],
    errors: {
      unique: codeTaken(input.code),
      foreignKey: async () => {
        const missingMenus = granting ? await missingIds(run, 'menus', [...menuIds]) : [];
        if (missingMenus.length > 0) return badRequest(unknownIdsMessage('menuIds', 'menu', missingMenus));
        return unknownOrgs(run, orgIds)();
      },
      messages: {
        code_required: scoping ? GRANT_DATA_SCOPE_NEEDED : input.mfaRequired !== undefined ? REQUIRE_MFA_NEEDED : GRANT_MENU_NEEDED,
        outside_authority: 'menuIds: you can only grant menus you hold yourself',
      },
    },
    finish: lastRole,
  });
}

/**
 * Partial update under the version check; disabling obeys the super-admin guard. `status` also
 * needs sys:role:changeStatus, dataScope/scopeOrgIds sys:role:grantDataScope (403). Containment:
 * the role, before and after, carries no code or data scope the caller lacks (403, in the write).
 */
export async function editRole(deps: Ports, run: Runner, input: EditRoleInput) {
  const auth = await run.caller();
  const scoping = input.dataScope !== undefined || input.scopeOrgIds !== undefined;
  // The current row is read first only when the edit depends on it (a scope change, a new code);
  // otherwise existence and the status code are guards of the batch, which reads its answer back
  // (2 round trips with auth), and the checks run only to explain a refusal.
  const readFirst = scoping || input.code !== undefined;
  const checks = async () => {
    const current = await requireRole(run, input.id);
    if (input.status !== undefined) await requireCode(run, 'sys:role:changeStatus', 'status');
    if (input.mfaRequired !== undefined) await requireCode(run, 'sys:role:requireMfa', 'mfaRequired');
    return current;
  };
  const current = readFirst ? await checks() : undefined;
  if (scoping) await requireCode(run, 'sys:role:grantDataScope', 'dataScope');
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
  if (input.mfaRequired !== undefined) set.mfa_required = input.mfaRequired ? 1 : 0;
  const target = sql`(SELECT ${input.id})`;
  // Every rule before the writes, judged on the state they start from: the caller's scope and
  // codes as they stand (a role they hold cannot lift them by its own edit), the role as it is,
  // its holders, and the scope it gets (values).
  const batch: CompiledQuery[] = [
    roleExistsGuard(input.id),
    ...(input.status !== undefined ? holdsGuard(auth, 'sys:role:changeStatus') : []),
    ...(scoping ? holdsGuard(auth, 'sys:role:grantDataScope') : []),
    ...(input.mfaRequired !== undefined ? holdsGuard(auth, 'sys:role:requireMfa') : []),
    ...roleAuthorityGuard(auth, target),
    ...roleHoldersGuard(auth, target),
    ...(scoping ? scopeWidensGuard(auth, { kind: dataScope, orgIds }) : []),
    versionGuard('roles', input.id, input.version),
    qb
      .updateTable('roles')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (scoping) batch.push(...scopeStatements(input.id, dataScope, orgIds));
  if (input.status === 'disabled') batch.push(lastSuperAdminGuard());
  batch.push(roleRowQuery({ id: input.id }));
  return run.write({
    batch,
    errors: { unique: codeTaken(input.code ?? ''), foreignKey: unknownOrgs(run, orgIds), messages: { out_of_scope: 'Role not found', outside_authority: ROLE_OUTSIDE } },
    explain: readFirst ? undefined : checks,
    finish: lastRole,
  });
}

/**
 * Sets a role's data scope (own code sys:role:grantDataScope). The role before, and the scope
 * given, must lie within the caller's own scope: nobody hands out a wider scope than they have (403).
 */
export async function grantDataScope(deps: Ports, run: Runner, input: GrantDataScopeInput) {
  const auth = await run.caller();
  // Existence is a guard of the batch (404 first, as the read before it answered; an invalid
  // scope list of an unknown role is still that 404).
  let orgIds: number[];
  try {
    orgIds = scopeValues(input.dataScope, input.scopeOrgIds);
  } catch (err) {
    await requireRole(run, input.roleId);
    throw err;
  }
  const target = sql`(SELECT ${input.roleId})`;
  await run.write(
    writeOf(
      [
        // Before the writes: the role as it is is within the caller's authority, its holders are
        // in their scope, and the scope given is no wider than theirs AS IT STANDS (judged after
        // the writes, a caller changing a role they hold was judged by the scope just given).
        roleExistsGuard(input.roleId),
        ...roleAuthorityGuard(auth, target),
        ...roleHoldersGuard(auth, target),
        ...scopeWidensGuard(auth, { kind: input.dataScope, orgIds }),
        ...scopeStatements(input.roleId, input.dataScope, orgIds),
        sql`UPDATE roles SET version = version + 1, updated_at = ${isoNow(deps.clock)} WHERE id = ${input.roleId}`.compile(qb),
      ],
      {
        messages: {
          out_of_scope: 'Role not found',
          outside_authority:
            'dataScope: you cannot give a role a data scope wider than your own, nor change a role that carries a permission or a scope you do not hold',
        },
        foreignKey: async () => ((await findRole(run, input.roleId)) ? unknownOrgs(run, orgIds)() : notFound('Role not found')),
      },
    ),
  );
}

/**
 * Deletes roles that no user holds (400 otherwise: revoke the role first), with their menu grants.
 * The in-use check is repeated inside the write, so a grant racing the delete cannot be lost.
 */
export async function deleteRoles(run: Runner, ids: number[]) {
  const auth = await run.caller();
  // The checks' rules are guards of the batch (400 with role_in_use's answer); the checks run only
  // to explain a refusal with their precise message.
  const checks = async () => {
    const roles = await run.rows<{ id: number; code: string }>(qb.selectFrom('roles').select(['id', 'code']).where('id', 'in', idList(ids)).compile());
    if (roles.some((r) => r.code === SUPER_ADMIN_ROLE)) throw badRequest(`ids: the built-in ${SUPER_ADMIN_ROLE} role cannot be deleted`);
    const held = await run.rows<{ role_id: number }>(
      qb.selectFrom('user_role').select('role_id').distinct().where('role_id', 'in', idList(ids)).orderBy('role_id').compile(),
    );
    if (held.length > 0) {
      throw badRequest(`ids: role ${held.map((r) => r.role_id).join(', ')} is still granted to users; revoke it first`);
    }
  };
  await run.write(
    writeOf(
      [
        guardStatement('role_in_use', sql`EXISTS (SELECT 1 FROM roles WHERE id IN ${idList(ids)} AND code = ${SUPER_ADMIN_ROLE})`),
        guardStatement('role_in_use', sql`EXISTS (SELECT 1 FROM user_role WHERE role_id IN ${idList(ids)})`),
        ...roleAuthorityGuard(auth, idList(ids)),
        qb.deleteFrom('role_menu').where('role_id', 'in', idList(ids)).compile(),
        qb.deleteFrom('roles').where('id', 'in', idList(ids)).where('code', '!=', SUPER_ADMIN_ROLE).compile(),
        lastSuperAdminGuard(),
      ],
      { messages: { outside_authority: ROLE_OUTSIDE } },
      checks,
    ),
  );
}

/** A disabled role grants nothing from the next request on (the auth query checks role status). */
export async function changeRoleStatus(deps: Ports, run: Runner, input: { id: number; status: 'enabled' | 'disabled' }) {
  const auth = await run.caller();
  const batch: CompiledQuery[] = [
    // The operation's own code, whichever route asked.
    ...holdsGuard(auth, 'sys:role:changeStatus'),
    roleExistsGuard(input.id),
    ...roleAuthorityGuard(auth, sql`(SELECT ${input.id})`),
    ...roleHoldersGuard(auth, sql`(SELECT ${input.id})`),
    qb
      .updateTable('roles')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') batch.push(lastSuperAdminGuard());
  await run.write(
    writeOf(batch, { messages: { out_of_scope: 'Role not found', outside_authority: ROLE_OUTSIDE, code_required: 'status: changing it requires the permission sys:role:changeStatus' } }),
  );
}

/**
 * Replaces the role's menus atomically; an unknown menu id fails the whole write (400).
 * Rule: a caller who is not a super admin may only add or remove menus they hold themselves (granted
 * to one of their enabled roles), else 403 naming the menus; so sys:role:grantMenu cannot hand out
 * a code (e.g. sys:user:grantRole) its holder lacks. A guard in the write's batch judges the rule
 * again (403, nothing changed), so a revoke of the caller's menus landing meanwhile cannot widen it.
 */
export async function grantMenus(run: Runner, input: { roleId: number; menuIds: number[] }) {
  const auth = await run.caller();
  const unknownMenus = async () => badRequest(unknownIdsMessage('menuIds', 'menu', await missingIds(run, 'menus', input.menuIds)));
  const target = sql`(SELECT ${input.roleId})`;
  const list = JSON.stringify(input.menuIds);
  // One batch, every check a guard in it, in the order the answers take: the role exists (404),
  // the menus exist (400: a foreign-key failure), a delegated admin holds every menu they add or
  // remove at that moment (403, changedMenusHeldGuard), the role is within their authority (403).
  // Then the write, and the authority again after it.
  const batch: CompiledQuery[] = [guardStatement('out_of_scope', sql`NOT EXISTS (SELECT 1 FROM roles WHERE id = ${input.roleId})`)];
  if (!auth.isSuperAdmin) {
    batch.push(
      // Inserts a row only for a menu that does not exist: its foreign key fails the batch (400).
      sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${list})
        WHERE value NOT IN (SELECT id FROM menus)`.compile(qb),
      ...changedMenusHeldGuard(auth, input.roleId, input.menuIds),
    );
  }
  batch.push(...roleAuthorityGuard(auth, target), ...roleHoldersGuard(auth, target));
  batch.push(qb.deleteFrom('role_menu').where('role_id', '=', input.roleId).compile());
  if (input.menuIds.length > 0) {
    batch.push(sql`INSERT INTO role_menu (role_id, menu_id) SELECT ${input.roleId}, value FROM json_each(${list})`.compile(qb));
  }
  batch.push(...roleAuthorityGuard(auth, target));
  await run.write(
    writeOf(
      batch,
      {
        messages: { outside_authority: `${ROLE_OUTSIDE.slice(0, -1)}, or menuIds changes menus that you no longer hold)`, out_of_scope: 'Role not found' },
        foreignKey: async () => {
          if (!(await findRole(run, input.roleId))) return notFound('Role not found');
          return unknownMenus();
        },
      },
      // Which 403: menus the caller does not hold are named (read now; the failed batch changed nothing).
      async (refused) => {
        if (!auth.isSuperAdmin && refused.code === 'FORBIDDEN') await notHeld(run, auth, input);
      },
    ),
  );
}

/** Throws the 403 naming the menus a delegated admin would add or remove without holding them, if any. */
async function notHeld(run: Runner, auth: Caller, input: { roleId: number; menuIds: number[] }) {
  const current = (await run.rows<{ menu_id: number }>(qb.selectFrom('role_menu').select('menu_id').where('role_id', '=', input.roleId).compile())).map(
    (r) => r.menu_id,
  );
  const wanted = new Set(input.menuIds);
  const changed = [...input.menuIds.filter((id) => !current.includes(id)), ...current.filter((id) => !wanted.has(id))];
  if (changed.length === 0) return;
  const held = new Set(
    (
      await run.rows<{ id: number }>(qb.selectFrom('menus').select('id').where('id', 'in', idList(changed)).where('id', 'in', heldMenuIds(auth.userId)).compile())
    ).map((r) => r.id),
  );
  const notHeldIds = [...new Set(changed.filter((id) => !held.has(id)))].sort((a, b) => a - b);
  if (notHeldIds.length === 0) return;
  const shown = notHeldIds.slice(0, 10).join(', ');
  const more = notHeldIds.length > 10 ? `, … (${notHeldIds.length} in all)` : '';
  throw forbidden(`menuIds: you can only grant or revoke menus you hold yourself; not held: menu${notHeldIds.length === 1 ? '' : 's'} ${shown}${more}`);
}

export function ownMenus(run: Runner, id: number): Promise<number[]> {
  // The role and its menus in one read (one round trip with the auth row on D1).
  return run.read({
    reads: [ROLE_EXISTS.bind({ id }), ROLE_MENUS.bind({ id })],
    finish: ([role, rows]) => {
      if (!role?.length) throw notFound('Role not found');
      return (rows as { menu_id: number }[]).map((r) => r.menu_id);
    },
  });
}
