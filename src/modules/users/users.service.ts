import { sql, type CompiledQuery } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { AuthUser } from '../../core/caller.ts';
import { badRequest, conflict, forbidden, notFound, tooMany } from '../../core/errors.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { isoNow } from '../../core/time.ts';
import { versionGuard } from '../../db/guarded-write.ts';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list.ts';
import { NAME_RULE } from '../auth/login.service.ts';
import { hit, lockedFor } from '../auth/rate-limit.ts';
import { assertMayGrantRoles, callerHolds, changedRoles, changedRolesHeldGuard, holdsGuard } from '../access/held.ts';
import { assertMayTouchSuperAdmin, lastSuperAdminGuard, superAdminOnly, superAdminOnlyAmong } from '../access/super-admin.ts';
import { toUser } from './user.model.ts';
import { findUser, findUserInScope, userInScopeStatement, grantStatements, revokeSessions, userExistsGuard, userRowQuery } from './users.repo.ts';
import type { PublicUserRow } from './user.model.ts';
import type { AddUserInput, EditUserInput } from './users.schemas.ts';
import { accessWrite, explainedWrite } from '../access/access-write.ts';
import { userAuthorityGuard, userScopeGuard, userStaysInScopeGuard } from '../access/containment.ts';
import { orgInScope, scopeAll, userInScope } from '../access/data-scope.ts';

export { pageUsers } from './users.repo.ts';

/** The user, if it exists in the caller's data scope; else 404 as if it did not exist. */
async function requireUser(deps: Deps, auth: AuthUser, id: number) {
  const row = await findUserInScope(deps, auth, id);
  if (!row) throw notFound('User not found');
  return row;
}

/** Containment's 403 for writes on users (contract: "Delegation: who may act on whom"). */
export const USER_OUTSIDE =
  'Refused: outside your authority (the user holds a permission or a data scope that you do not hold, or would leave your data scope)';

/** A user's organisation must exist (400) and lie in the caller's data scope (403). */
async function assertOrgAssignable(deps: Deps, auth: AuthUser, orgId: number | null) {
  if (auth.isSuperAdmin) {
    if (orgId !== null && !(await orgExists(deps, orgId))) throw unknownOrg(orgId);
    return;
  }
  const c = auth.userId;
  const { rows } = await sql<{ exists_: number; visible: number; all_: number }>`SELECT
      EXISTS (SELECT 1 FROM orgs WHERE id = ${orgId}) AS exists_,
      ${orgInScope(c, sql`${orgId}`)} AS visible, ${scopeAll(c)} AS all_`.execute(deps.db);
  const r = rows[0]!;
  if (orgId !== null && r.exists_ !== 1) throw badRequest(`orgId: organisation ${orgId} does not exist`);
  if (r.all_ === 1) return;
  if (orgId === null) throw forbidden('orgId: a user without an organisation would be outside your data scope; choose an organisation you see');
  if (r.visible !== 1) throw forbidden(`orgId: organisation ${orgId} is outside your data scope`);
}

/**
 * Nobody but a super admin gives themselves a role or moves themselves to another organisation: the
 * containment guards compare the target with the caller, which are one person here, so a new role
 * with a wider data scope would pass them. Giving up a role, or re-sending the same set, is fine.
 */
async function assertNotSelfPromotion(deps: Deps, auth: AuthUser, userId: number, input: { roleIds?: readonly number[] | undefined; orgId?: unknown }) {
  if (auth.isSuperAdmin || userId !== auth.userId) return;
  if (input.orgId !== undefined) throw forbidden('orgId: you cannot move yourself to another organisation; ask another administrator');
  if (input.roleIds === undefined) return;
  const current = new Set((await deps.db.selectFrom('user_role').select('role_id').where('user_id', '=', userId).execute()).map((r) => r.role_id));
  if (input.roleIds.some((id) => !current.has(id))) throw forbidden('roleIds: you cannot give yourself a role; ask another administrator');
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

export async function userDetail(deps: Deps, auth: AuthUser, id: number) {
  return toUser(await requireUser(deps, auth, id));
}

/**
 * Creates the user and its role grants in one atomic write: an unknown role leaves no user behind.
 * Only a super admin may add a user holding the superAdmin role (403).
 */
export async function addUser(deps: Deps, auth: AuthUser, input: AddUserInput) {
  const { db } = deps;
  const roleIds = input.roleIds ?? [];
  // The early checks, each enforced by a guard (or the org's foreign key) of the batch below: they
  // run only when the batch is refused, for its precise answer (explainedWrite).
  const checks = async () => {
    await assertMayTouchSuperAdmin(deps, auth, { roleIds }, ONLY_SUPER.add);
    await assertMayGrantRoles(deps, auth, roleIds);
    await assertOrgAssignable(deps, auth, input.orgId ?? null);
  };
  try {
    assertPasswordAllowed(input.password, input.loginName, deps.config.PASSWORD_MIN_LENGTH, 'password');
  } catch (err) {
    await checks(); // a refusal they give came first
    throw err;
  }
  // A taken login name is answered by the unique index (409) when the batch runs: no read before.
  const hash = await deps.hasher.hash(input.password);
  const now = isoNow(deps.clock);
  const added = sql`(SELECT nu.id FROM users nu WHERE nu.login_name = ${input.loginName})`;
  const queries: CompiledQuery[] = [
    ...superAdminOnly(deps, auth, { roleIds }),
    // The new user holds nothing yet: every role granted is a change.
    ...changedRolesHeldGuard(deps, auth, sql`NULL`, roleIds),
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
        org_id: input.orgId ?? null,
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
  // After the writes: the new user is inside the caller's scope (which is what assertOrgAssignable
  // asks of the organisation) and authority (a grant racing the request, e.g. a role gaining a menu
  // the caller lacks, fails the whole batch).
  queries.push(...userStaysInScopeGuard(deps, auth, added), ...userAuthorityGuard(deps, auth, added));
  // The new row as the answer, read by the batch itself (no second round trip).
  queries.push(userRowQuery(deps, added));
  const results = await explainedWrite(
    () =>
      accessWrite(deps, queries, {
        unique: loginNameTaken(input.loginName),
        foreignKey: async () => (input.orgId != null && !(await orgExists(deps, input.orgId)) ? unknownOrg(input.orgId) : unknownRoles(deps, roleIds)()),
        superAdminOnly: ONLY_SUPER.add,
        outsideAuthority: USER_OUTSIDE,
      }),
    checks,
  );
  return toUser(lastRow<PublicUserRow>(results));
}

const orgExists = async (deps: Deps, orgId: number) => (await deps.db.selectFrom('orgs').select('id').where('id', '=', orgId).executeTakeFirst()) !== undefined;
const unknownOrg = (orgId: number) => badRequest(`orgId: organisation ${orgId} does not exist`);

/** The one row the last statement of a batch read (the answer a write reads back in its own batch). */
function lastRow<T>(results: { rows: unknown[] }[]): T {
  const row = results.at(-1)?.rows[0];
  if (!row) throw notFound('User not found');
  return row as T;
}

/**
 * Partial update under the version check; status and roleIds changes obey the last-super-admin
 * guard. `roleIds` also needs sys:user:grantRole and `status` sys:user:changeStatus (403), so edit
 * is no back door around those codes; a user holding the superAdmin role, or a grant of it, is for
 * super admins only (403).
 */
export async function editUser(deps: Deps, auth: AuthUser, input: EditUserInput) {
  const { db } = deps;
  // The current row is read first only when the edit depends on it (a rename, a move, an edit of
  // oneself by someone not a super admin); otherwise existence, scope and every rule of the checks
  // below are guards of the write batch, which also reads the answer back: one round trip, and the
  // checks run only when the batch is refused, for its precise answer (explainedWrite).
  const readFirst = input.loginName !== undefined || input.orgId !== undefined || (!auth.isSuperAdmin && input.id === auth.userId);
  const touch = { userIds: [input.id], roleIds: input.roleIds ?? [] };
  const checks = async () => {
    const current = readFirst || !auth.isSuperAdmin ? await requireUser(deps, auth, input.id) : undefined;
    if (current && input.loginName !== undefined && input.loginName.toLowerCase() !== current.login_name.toLowerCase()) {
      await assertNameIsNotPassword(deps, input.id, input.loginName);
    }
    if (input.roleIds !== undefined && !(await callerHolds(deps, auth, 'sys:user:grantRole'))) {
      throw forbidden('roleIds: changing roles through edit also requires the permission sys:user:grantRole');
    }
    if (input.status !== undefined && !(await callerHolds(deps, auth, 'sys:user:changeStatus'))) {
      throw forbidden('status: changing the status through edit also requires the permission sys:user:changeStatus');
    }
    await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.edit);
    // (a super admin may grant anything: no read of the current roles)
    if (input.roleIds !== undefined && !auth.isSuperAdmin) await assertMayGrantRoles(deps, auth, await changedRoles(deps, input.id, input.roleIds));
    if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
    const moving = current !== undefined && input.orgId !== undefined && input.orgId !== current.org_id;
    await assertNotSelfPromotion(deps, auth, input.id, { roleIds: input.roleIds, orgId: moving ? input.orgId : undefined });
    if (moving) await assertOrgAssignable(deps, auth, input.orgId ?? null);
    return moving;
  };
  if (!readFirst && input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  const moving = readFirst ? await checks() : false;
  const now = isoNow(deps.clock);
  const set: Record<string, unknown> = {};
  if (input.orgId !== undefined) set.org_id = input.orgId;
  if (input.loginName !== undefined) set.login_name = input.loginName;
  if (input.nickName !== undefined) set.nick_name = input.nickName;
  if (input.email !== undefined) set.email = input.email;
  if (input.phone !== undefined) set.phone = input.phone;
  if (input.avatar !== undefined) set.avatar = input.avatar;
  if (input.remark !== undefined) set.remark = input.remark;
  if (input.status !== undefined) set.status = input.status;
  const target = idList([input.id]);
  const queries: CompiledQuery[] = [
    userExistsGuard(deps, input.id),
    ...userScopeGuard(deps, auth, [input.id]),
    ...superAdminOnly(deps, auth, touch),
    ...userAuthorityGuard(deps, auth, target),
    // The checks' code and grant rules, judged on the state before the writes (none for a super admin).
    ...(input.roleIds !== undefined ? holdsGuard(deps, auth, 'sys:user:grantRole') : []),
    ...(input.status !== undefined ? holdsGuard(deps, auth, 'sys:user:changeStatus') : []),
    ...(input.roleIds !== undefined ? changedRolesHeldGuard(deps, auth, sql`${input.id}`, input.roleIds) : []),
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
  if (moving) queries.push(...userStaysInScopeGuard(deps, auth, target));
  if (input.roleIds !== undefined) queries.push(...userAuthorityGuard(deps, auth, target));
  queries.push(userRowQuery(deps, sql`(${input.id})`));
  const write = () =>
    accessWrite(deps, queries, {
      unique: loginNameTaken(input.loginName ?? ''),
      foreignKey: async () =>
        input.orgId !== undefined && input.orgId !== null && !(await orgExists(deps, input.orgId)) ? unknownOrg(input.orgId) : unknownRoles(deps, input.roleIds ?? [])(),
      superAdminOnly: ONLY_SUPER.edit,
      outOfScope: 'User not found',
      outsideAuthority: USER_OUTSIDE,
    });
  const results = readFirst ? await write() : await explainedWrite(write, checks);
  return toUser(lastRow<PublicUserRow>(results));
}

/**
 * A new login name must not be the user's current password (the password rule, seen from the
 * other side). The check is a password guess, so it is throttled like one: an editor cannot use
 * renames to test candidate passwords of someone else's account. The version guard of the write
 * covers a password change in between (changes bump the version).
 */
async function assertNameIsNotPassword(deps: Deps, userId: number, loginName: string) {
  const key = `rename-check:${userId}`;
  const lockMs = await lockedFor(deps, [key]);
  if (lockMs > 0) throw tooMany(lockMs / 1000, 'Too many login name changes for this user, try again later');
  await hit(deps, key, NAME_RULE);
  const row = await deps.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  if (!row) throw notFound('User not found');
  // The password rule is case-insensitive, a hash is not: try the name as typed, lower and upper.
  for (const candidate of new Set([loginName, loginName.toLowerCase(), loginName.toUpperCase()])) {
    if (await deps.hasher.verify(row.password_hash, candidate)) throw badRequest("loginName: must not equal the user's current password");
  }
}

/**
 * Deletes users with their grants and sessions; never the caller, never the last super admin, and
 * a holder of the superAdmin role only by a super admin (403).
 */
export async function deleteUsers(deps: Deps, auth: AuthUser, ids: number[]) {
  const { db } = deps;
  if (ids.includes(auth.userId)) throw badRequest('ids: you cannot delete your own account');
  // Users outside the caller's scope are treated exactly like unknown ids: skipped. Acted on are
  // the ids in scope when the batch runs; every rule is a guard in it, so nothing is read before
  // it, and the early checks run only to explain a refusal (explainedWrite).
  const checks = async () => {
    const visible = auth.isSuperAdmin
      ? ids
      : (
          await db
            .selectFrom('users')
            .select('id')
            .where('id', 'in', idList(ids))
            .where(userInScope(auth.userId, sql.ref('users.id'), sql.ref('users.org_id')))
            .execute()
        ).map((r) => r.id);
    if (visible.length > 0) await assertMayTouchSuperAdmin(deps, auth, { userIds: visible }, ONLY_SUPER.delete);
  };
  const targets = auth.isSuperAdmin
    ? idList(ids)
    : sql<number>`(SELECT dv.id FROM users dv WHERE dv.id IN ${idList(ids)} AND ${userInScope(auth.userId, sql.ref('dv.id'), sql.ref('dv.org_id'))})`;
  await explainedWrite(
    () =>
      accessWrite(deps, [
        ...superAdminOnlyAmong(deps, auth, targets),
        ...userAuthorityGuard(deps, auth, targets),
        db.deleteFrom('sessions').where('user_id', 'in', targets).compile(),
        db.deleteFrom('user_role').where('user_id', 'in', targets).compile(),
        db.deleteFrom('users').where('id', 'in', targets).compile(),
        lastSuperAdminGuard(deps),
      ], { superAdminOnly: ONLY_SUPER.delete, outsideAuthority: USER_OUTSIDE }),
    checks,
  );
}

/**
 * Enables or disables a user; disabling revokes the user's sessions in the same write. A holder of
 * the superAdmin role only by a super admin (403).
 */
export async function changeUserStatus(deps: Deps, auth: AuthUser, input: { id: number; status: 'enabled' | 'disabled' }) {
  const { db } = deps;
  if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  const touch = { userIds: [input.id] };
  // Enforced by the guards of the batch; run only to explain a refusal (explainedWrite).
  const checks = async () => {
    await requireUser(deps, auth, input.id);
    await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.changeStatus);
  };
  const now = isoNow(deps.clock);
  const queries: CompiledQuery[] = [
    userExistsGuard(deps, input.id),
    ...userScopeGuard(deps, auth, [input.id]),
    ...superAdminOnly(deps, auth, touch),
    ...userAuthorityGuard(deps, auth, idList([input.id])),
    db
      .updateTable('users')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') queries.push(revokeSessions(deps, [input.id], now), lastSuperAdminGuard(deps));
  await explainedWrite(
    () => accessWrite(deps, queries, { superAdminOnly: ONLY_SUPER.changeStatus, outOfScope: 'User not found', outsideAuthority: USER_OUTSIDE }),
    checks,
  );
}

/**
 * Sets a new password (policy checked against the user's login name) and ends all the user's
 * sessions. A holder of the superAdmin role only by a super admin (403): else a known password
 * would be a way into the super admin's account.
 */
export async function resetPassword(deps: Deps, auth: AuthUser, input: { id: number; newPassword: string }) {
  const { db } = deps;
  // The user is read first (the password rule needs their login name); the super-admin rule is a
  // guard of the batch, checked early only to explain a refusal or a refused password.
  const user = await requireUser(deps, auth, input.id);
  const touch = { userIds: [input.id] };
  const checks = () => assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.resetPassword);
  try {
    assertPasswordAllowed(input.newPassword, user.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
  } catch (err) {
    await checks();
    throw err;
  }
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await explainedWrite(() => accessWrite(
    deps,
    [
      ...superAdminOnly(deps, auth, touch),
      ...userScopeGuard(deps, auth, [input.id]),
      ...userAuthorityGuard(deps, auth, idList([input.id])),
      db
        .updateTable('users')
        .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
        .where('id', '=', input.id)
        .compile(),
      revokeSessions(deps, [input.id], now),
    ],
    { superAdminOnly: ONLY_SUPER.resetPassword, outOfScope: 'User not found', outsideAuthority: USER_OUTSIDE },
  ), checks);
}

/**
 * Replaces the user's roles atomically; the last-super-admin guard runs in the same write. Only a
 * super admin may grant or revoke the superAdmin role or change a holder's roles (403).
 */
export async function grantRoles(deps: Deps, auth: AuthUser, input: { userId: number; roleIds: number[] }) {
  // One batch: existence, scope and every rule of the checks below are guards in it. The checks
  // read first only for someone not a super admin granting to themselves (self-promotion reads
  // their roles); otherwise they run only to explain a refused batch (explainedWrite).
  const touch = { userIds: [input.userId], roleIds: input.roleIds };
  const checks = async () => {
    if (!auth.isSuperAdmin) await requireUser(deps, auth, input.userId);
    await assertMayTouchSuperAdmin(deps, auth, touch, ONLY_SUPER.grantRole);
    await assertNotSelfPromotion(deps, auth, input.userId, { roleIds: input.roleIds });
    if (!auth.isSuperAdmin) await assertMayGrantRoles(deps, auth, await changedRoles(deps, input.userId, input.roleIds));
  };
  const readFirst = !auth.isSuperAdmin && input.userId === auth.userId;
  if (readFirst) await checks();
  const target = idList([input.userId]);
  const queries = [
    userExistsGuard(deps, input.userId),
    ...userScopeGuard(deps, auth, [input.userId]),
    ...superAdminOnly(deps, auth, touch),
    ...userAuthorityGuard(deps, auth, target),
    ...changedRolesHeldGuard(deps, auth, sql`${input.userId}`, input.roleIds),
    ...grantStatements(deps, input.userId, input.roleIds),
    ...userAuthorityGuard(deps, auth, target),
    lastSuperAdminGuard(deps),
  ];
  const write = () =>
    accessWrite(deps, queries, {
      superAdminOnly: ONLY_SUPER.grantRole,
      outOfScope: 'User not found',
      outsideAuthority: USER_OUTSIDE,
      foreignKey: async () => ((await findUser(deps, input.userId)) ? unknownRoles(deps, input.roleIds)() : notFound('User not found')),
    });
  await (readFirst ? write() : explainedWrite(write, checks));
}

export async function ownRoles(deps: Deps, auth: AuthUser, id: number): Promise<number[]> {
  // The user (in the caller's scope) and their role ids in one read: one round trip with the auth
  // row on D1. The ids are only answered when the user row says the caller may see the user.
  const [users, rows] = await deps.readMany([
    userInScopeStatement(auth, id),
    deps.db.selectFrom('user_role').select('role_id').where('user_id', '=', id).orderBy('role_id').compile(),
  ]);
  if (!users?.length) throw notFound('User not found');
  return (rows as { role_id: number }[]).map((r) => r.role_id);
}
