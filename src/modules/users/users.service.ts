import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps';
import type { AuthUser } from '../../core/caller';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors';
import { assertPasswordAllowed } from '../../core/password-policy';
import { isoNow } from '../../core/time';
import { guardedWrite, versionGuard } from '../../db/guarded-write';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list';
import { assertMayGrantRoles, callerHolds, changedRoles } from '../access/held';
import { assertMayTouchSuperAdmin, lastSuperAdminGuard, superAdminOnly } from '../access/super-admin';
import { toUser } from './user.model';
import { findUser, findUserByLoginName, grantStatements, revokeSessions } from './users.repo';
import type { AddUserInput, EditUserInput } from './users.schemas';

export { pageUsers } from './users.repo';

async function requireUser(deps: Deps, id: number) {
  const row = await findUser(deps, id);
  if (!row) throw notFound('User not found');
  return row;
}

// 403 answers of the super-admin rule (see assertMayTouchSuperAdmin): only a super admin may grant
// or revoke the superAdmin role, or touch a user who holds it.
export const ONLY_SUPER = {
  add: 'Only a super administrator can add a user with the superAdmin role',
  edit: 'Only a super administrator can edit a user who holds the superAdmin role or grant that role',
  delete: 'Only a super administrator can delete a user who holds the superAdmin role',
  changeStatus: 'Only a super administrator can enable or disable a user who holds the superAdmin role',
  resetPassword: "Only a super administrator can reset the password of a user who holds the superAdmin role",
  grantRole: 'Only a super administrator can grant or revoke the superAdmin role or change the roles of a user who holds it',
} as const;

const loginNameTaken = (name: string) => `loginName: '${name}' is already taken`;

/** A grant naming a role that does not exist (any more) fails its batch on the foreign key. */
const unknownRoles = (deps: Deps, roleIds: readonly number[]) => async () => {
  const missing = await missingIds(deps, 'roles', roleIds);
  return badRequest(unknownIdsMessage('roleIds', 'role', missing));
};

export async function userDetail(deps: Deps, id: number) {
  return toUser(await requireUser(deps, id));
}

/**
 * Creates the user and its role grants in one atomic write: an unknown role leaves no user behind.
 * Only a super admin may add a user holding the superAdmin role (403).
 */
export async function addUser(deps: Deps, auth: AuthUser, input: AddUserInput) {
  const { db } = deps;
  const roleIds = input.roleIds ?? [];
  await assertMayTouchSuperAdmin(deps, auth, { roleIds }, ONLY_SUPER.add);
  await assertMayGrantRoles(deps, auth, roleIds);
  assertPasswordAllowed(input.password, input.loginName, deps.config.PASSWORD_MIN_LENGTH, 'password');
  // Cheap early answer; the unique index decides when two adds race.
  if (await findUserByLoginName(deps, input.loginName)) throw conflict(loginNameTaken(input.loginName));
  const hash = await deps.hasher.hash(input.password);
  const now = isoNow(deps.clock);
  const queries: CompiledQuery[] = [
    ...superAdminOnly(deps, auth, { roleIds }),
    db
      .insertInto('users')
      .values({
        login_name: input.loginName,
        password_hash: hash,
        nick_name: input.nickName ?? input.loginName,
        email: input.email ?? null,
        phone: input.phone ?? null,
        avatar: input.avatar ?? null,
        remark: input.remark ?? null,
        status: input.status ?? 'enabled',
        created_at: now,
        updated_at: now,
      })
      .compile(),
  ];
  if (roleIds.length > 0) {
    // The new id is not known before the batch runs, so the grant finds the row by its login name.
    queries.push(
      sql`INSERT INTO user_role (user_id, role_id) SELECT u.id, v.value FROM users u, json_each(${JSON.stringify(roleIds)}) v
        WHERE u.login_name = ${input.loginName}`.compile(db),
    );
  }
  await guardedWrite(deps, queries, {
    unique: loginNameTaken(input.loginName),
    foreignKey: unknownRoles(deps, roleIds),
    superAdminOnly: ONLY_SUPER.add,
  });
  const row = await findUserByLoginName(deps, input.loginName);
  if (!row) throw notFound('User not found');
  return toUser(row);
}

/**
 * Partial update under the version check; status and roleIds changes obey the last-super-admin
 * guard. `roleIds` also needs sys:user:grantRole and `status` sys:user:changeStatus (403), so edit
 * is no back door around those codes; a user holding the superAdmin role, or a grant of it, is for
 * super admins only (403).
 */
export async function editUser(deps: Deps, auth: AuthUser, input: EditUserInput) {
  const { db } = deps;
  await requireUser(deps, input.id);
  if (input.roleIds !== undefined && !(await callerHolds(deps, auth, 'sys:user:grantRole'))) {
    throw forbidden('roleIds: changing roles through edit also requires the permission sys:user:grantRole');
  }
  if (input.status !== undefined && !(await callerHolds(deps, auth, 'sys:user:changeStatus'))) {
    throw forbidden('status: changing the status through edit also requires the permission sys:user:changeStatus');
  }
  const touch = { userIds: [input.id], roleIds: input.roleIds ?? [] };
  await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.edit);
  if (input.roleIds !== undefined) await assertMayGrantRoles(deps, auth, await changedRoles(deps, input.id, input.roleIds));
  if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  const now = isoNow(deps.clock);
  const set: Record<string, unknown> = {};
  if (input.loginName !== undefined) set.login_name = input.loginName;
  if (input.nickName !== undefined) set.nick_name = input.nickName;
  if (input.email !== undefined) set.email = input.email;
  if (input.phone !== undefined) set.phone = input.phone;
  if (input.avatar !== undefined) set.avatar = input.avatar;
  if (input.remark !== undefined) set.remark = input.remark;
  if (input.status !== undefined) set.status = input.status;
  const queries: CompiledQuery[] = [
    ...superAdminOnly(deps, auth, touch),
    versionGuard(deps, 'users', input.id, input.version),
    db
      .updateTable('users')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(revokeSessions(deps, [input.id], now));
  if (input.roleIds !== undefined) queries.push(...grantStatements(deps, input.id, input.roleIds));
  if (input.status === 'disabled' || input.roleIds !== undefined) queries.push(lastSuperAdminGuard(deps));
  await guardedWrite(deps, queries, {
    unique: loginNameTaken(input.loginName ?? ''),
    foreignKey: unknownRoles(deps, input.roleIds ?? []),
    superAdminOnly: ONLY_SUPER.edit,
  });
  return toUser(await requireUser(deps, input.id));
}

/**
 * Deletes users with their grants and sessions; never the caller, never the last super admin, and
 * a holder of the superAdmin role only by a super admin (403).
 */
export async function deleteUsers(deps: Deps, auth: AuthUser, ids: number[]) {
  const { db } = deps;
  if (ids.includes(auth.userId)) throw badRequest('ids: you cannot delete your own account');
  await assertMayTouchSuperAdmin(deps, auth, { userIds: ids }, ONLY_SUPER.delete);
  await guardedWrite(deps, [
    ...superAdminOnly(deps, auth, { userIds: ids }),
    db.deleteFrom('sessions').where('user_id', 'in', idList(ids)).compile(),
    db.deleteFrom('user_role').where('user_id', 'in', idList(ids)).compile(),
    db.deleteFrom('users').where('id', 'in', idList(ids)).compile(),
    lastSuperAdminGuard(deps),
  ], { superAdminOnly: ONLY_SUPER.delete });
}

/**
 * Enables or disables a user; disabling revokes the user's sessions in the same write. A holder of
 * the superAdmin role only by a super admin (403).
 */
export async function changeUserStatus(deps: Deps, auth: AuthUser, input: { id: number; status: 'enabled' | 'disabled' }) {
  const { db } = deps;
  if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  await requireUser(deps, input.id);
  const touch = { userIds: [input.id] };
  await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.changeStatus);
  const now = isoNow(deps.clock);
  const queries: CompiledQuery[] = [
    ...superAdminOnly(deps, auth, touch),
    db
      .updateTable('users')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(revokeSessions(deps, [input.id], now), lastSuperAdminGuard(deps));
  await guardedWrite(deps, queries, { superAdminOnly: ONLY_SUPER.changeStatus });
}

/**
 * Sets a new password (policy checked against the user's login name) and ends all the user's
 * sessions. A holder of the superAdmin role only by a super admin (403): else a known password
 * would be a way into the super admin's account.
 */
export async function resetPassword(deps: Deps, auth: AuthUser, input: { id: number; newPassword: string }) {
  const { db } = deps;
  const user = await requireUser(deps, input.id);
  const touch = { userIds: [input.id] };
  await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.resetPassword);
  assertPasswordAllowed(input.newPassword, user.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await guardedWrite(
    deps,
    [
      ...superAdminOnly(deps, auth, touch),
      db
        .updateTable('users')
        .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
        .where('id', '=', input.id)
        .compile(),
      revokeSessions(deps, [input.id], now),
    ],
    { superAdminOnly: ONLY_SUPER.resetPassword },
  );
}

/**
 * Replaces the user's roles atomically; the last-super-admin guard runs in the same write. Only a
 * super admin may grant or revoke the superAdmin role or change a holder's roles (403).
 */
export async function grantRoles(deps: Deps, auth: AuthUser, input: { userId: number; roleIds: number[] }) {
  await requireUser(deps, input.userId);
  const touch = { userIds: [input.userId], roleIds: input.roleIds };
  await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.grantRole);
  await assertMayGrantRoles(deps, auth, await changedRoles(deps, input.userId, input.roleIds));
  const queries = [...superAdminOnly(deps, auth, touch), ...grantStatements(deps, input.userId, input.roleIds), lastSuperAdminGuard(deps)];
  await guardedWrite(deps, queries, {
    superAdminOnly: ONLY_SUPER.grantRole,
    foreignKey: async () => ((await findUser(deps, input.userId)) ? unknownRoles(deps, input.roleIds)() : notFound('User not found')),
  });
}

export async function ownRoles(deps: Deps, id: number): Promise<number[]> {
  await requireUser(deps, id);
  const rows = await deps.db.selectFrom('user_role').select('role_id').where('user_id', '=', id).orderBy('role_id').execute();
  return rows.map((r) => r.role_id);
}
