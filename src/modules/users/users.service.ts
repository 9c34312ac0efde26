import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps';
import type { AuthUser } from '../../http/context';
import { badRequest, conflict, notFound } from '../../core/errors';
import { assertPasswordAllowed } from '../../core/password-policy';
import { isoNow } from '../../core/time';
import { guardedWrite, idList, lastSuperAdminGuard, missingIds, unknownIdsMessage, versionGuard } from './guarded-write';
import { toUser } from './user.model';
import { findUser, findUserByLoginName, grantStatements, revokeSessions } from './users.repo';
import type { AddUserInput, EditUserInput } from './users.schemas';

export { pageUsers } from './users.repo';

async function requireUser(deps: Deps, id: number) {
  const row = await findUser(deps, id);
  if (!row) throw notFound('User not found');
  return row;
}

const loginNameTaken = (name: string) => `loginName: '${name}' is already taken`;

/** A grant naming a role that does not exist (any more) fails its batch on the foreign key. */
const unknownRoles = (deps: Deps, roleIds: readonly number[]) => async () => {
  const missing = await missingIds(deps, 'roles', roleIds);
  return badRequest(unknownIdsMessage('roleIds', 'role', missing));
};

export async function userDetail(deps: Deps, id: number) {
  return toUser(await requireUser(deps, id));
}

/** Creates the user and its role grants in one atomic write: an unknown role leaves no user behind. */
export async function addUser(deps: Deps, input: AddUserInput) {
  const { db } = deps;
  assertPasswordAllowed(input.password, input.loginName, deps.config.PASSWORD_MIN_LENGTH, 'password');
  // Cheap early answer; the unique index decides when two adds race.
  if (await findUserByLoginName(deps, input.loginName)) throw conflict(loginNameTaken(input.loginName));
  const hash = await deps.hasher.hash(input.password);
  const now = isoNow(deps.clock);
  const roleIds = input.roleIds ?? [];
  const queries: CompiledQuery[] = [
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
  await guardedWrite(deps, queries, { unique: loginNameTaken(input.loginName), foreignKey: unknownRoles(deps, roleIds) });
  const row = await findUserByLoginName(deps, input.loginName);
  if (!row) throw notFound('User not found');
  return toUser(row);
}

/** Partial update under the version check; status and roleIds changes obey the super-admin guard. */
export async function editUser(deps: Deps, auth: AuthUser, input: EditUserInput) {
  const { db } = deps;
  await requireUser(deps, input.id);
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
  });
  return toUser(await requireUser(deps, input.id));
}

/** Deletes users with their grants and sessions; never the caller, never the last super admin. */
export async function deleteUsers(deps: Deps, auth: AuthUser, ids: number[]) {
  const { db } = deps;
  if (ids.includes(auth.userId)) throw badRequest('ids: you cannot delete your own account');
  await guardedWrite(deps, [
    db.deleteFrom('sessions').where('user_id', 'in', idList(ids)).compile(),
    db.deleteFrom('user_role').where('user_id', 'in', idList(ids)).compile(),
    db.deleteFrom('users').where('id', 'in', idList(ids)).compile(),
    lastSuperAdminGuard(deps),
  ]);
}

/** Enables or disables a user; disabling revokes the user's sessions in the same write. */
export async function changeUserStatus(deps: Deps, auth: AuthUser, input: { id: number; status: 'enabled' | 'disabled' }) {
  const { db } = deps;
  if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  await requireUser(deps, input.id);
  const now = isoNow(deps.clock);
  const queries: CompiledQuery[] = [
    db
      .updateTable('users')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(revokeSessions(deps, [input.id], now), lastSuperAdminGuard(deps));
  await guardedWrite(deps, queries);
}

/** Sets a new password (policy checked against the user's login name) and ends all the user's sessions. */
export async function resetPassword(deps: Deps, input: { id: number; newPassword: string }) {
  const { db } = deps;
  const user = await requireUser(deps, input.id);
  assertPasswordAllowed(input.newPassword, user.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await guardedWrite(deps, [
    db
      .updateTable('users')
      .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
    revokeSessions(deps, [input.id], now),
  ]);
}

/** Replaces the user's roles atomically; the super-admin guard runs in the same write. */
export async function grantRoles(deps: Deps, input: { userId: number; roleIds: number[] }) {
  await requireUser(deps, input.userId);
  await guardedWrite(deps, [...grantStatements(deps, input.userId, input.roleIds), lastSuperAdminGuard(deps)], {
    foreignKey: async () => ((await findUser(deps, input.userId)) ? unknownRoles(deps, input.roleIds)() : notFound('User not found')),
  });
}

export async function ownRoles(deps: Deps, id: number): Promise<number[]> {
  await requireUser(deps, id);
  const rows = await deps.db.selectFrom('user_role').select('role_id').where('user_id', '=', id).orderBy('role_id').execute();
  return rows.map((r) => r.role_id);
}
