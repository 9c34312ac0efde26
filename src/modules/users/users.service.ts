import { sql, type CompiledQuery, type SelectQueryBuilder } from 'kysely';
import { byUserRow } from '../../access/scoped-page.ts';
import type { Ports } from '../../core/ports.ts';
import type { Caller } from '../../core/caller.ts';
import { badRequest, forbidden, notFound, tooMany } from '../../core/errors.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { isoNow } from '../../core/time.ts';
import { prepare, qb } from '../../db/compile.ts';
import { versionGuard } from '../../db/guards.ts';
import { idList, missingIds, unknownIdsMessage } from '../../db/id-list.ts';
import { lastRow, writeOf, type WriteErrors } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { NAME_RULE } from '../auth/index.ts';
import { hit, lockedFor } from '../auth/index.ts';
import { assertMayGrantRoles, callerHolds, changedRoles, changedRolesHeldGuard, holdsGuard } from '../../access/held.ts';
import { assertMayTouchSuperAdmin, lastSuperAdminGuard, superAdminOnly, superAdminOnlyAmong } from '../../access/super-admin.ts';
import { toUser, USER_COLUMNS } from './user.model.ts';
import { userPostStatements } from './user-posts.ts';
import { BUILT_IN, initialPassword } from '../config/index.ts';
import { findUser, findUserInScope, userInScopeStatement, grantStatements, revokeSessions, userExistsGuard, userRowQuery } from './users.repo.ts';
import type { PublicUserRow } from './user.model.ts';
import type { AddUserInput, EditUserInput } from './users.schemas.ts';
import { selfGrantGuard, userAuthorityGuard, userScopeGuard, userStaysInScopeGuard } from '../../access/containment.ts';
import { orgInScope, scopeAll, userInScope } from '../../access/data-scope.ts';

export { pageUsers, userFilter } from './users.repo.ts';

/** The users page's data scope, for anything that must select the same rows (the export). */
export const USER_SCOPE = byUserRow(sql.ref('users.org_id'), sql.ref('users.id'));

/** An export's columns of a user: the public ones, the organisation's name and code, role and post codes. */
export const exportSelect = (q: SelectQueryBuilder<any, any, any>) =>
  q
    .leftJoin('orgs', 'orgs.id', 'users.org_id')
    .select([
      ...USER_COLUMNS.map((c) => `users.${c}` as const),
      'orgs.name as org_name',
      'orgs.code as org_code',
      sql<string>`(SELECT group_concat(er.code, ',') FROM user_role eur JOIN roles er ON er.id = eur.role_id WHERE eur.user_id = users.id)`.as('role_codes'),
      sql<string>`(SELECT group_concat(ep.code, ',') FROM user_post eup JOIN posts ep ON ep.id = eup.post_id WHERE eup.user_id = users.id)`.as('post_codes'),
    ]);

/** The user, if it exists in the caller's data scope; else 404 as if it did not exist. */
async function requireUser(run: Runner, id: number) {
  const row = await findUserInScope(run, id);
  if (!row) throw notFound('User not found');
  return row;
}

/** Containment's 403 for writes on users (contract: "Delegation: who may act on whom"). */
export const USER_OUTSIDE =
  'Refused: outside your authority (the user holds a permission or a data scope that you do not hold, or would leave your data scope)';

/** A user's organisation must exist (400) and lie in the caller's data scope (403). */
async function assertOrgAssignable(run: Runner, auth: Caller, orgId: number | null) {
  if (auth.isSuperAdmin) {
    if (orgId !== null && !(await orgExists(run, orgId))) throw unknownOrg(orgId);
    return;
  }
  const c = auth.userId;
  const r = (await run.first<{ exists_: number; visible: number; all_: number }>(sql`SELECT
      EXISTS (SELECT 1 FROM orgs WHERE id = ${orgId}) AS exists_,
      ${orgInScope(c, sql`${orgId}`)} AS visible, ${scopeAll(c)} AS all_`.compile(qb)))!;
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
async function assertNotSelfPromotion(run: Runner, auth: Caller, userId: number, input: { roleIds?: readonly number[] | undefined; orgId?: unknown }) {
  if (auth.isSuperAdmin || userId !== auth.userId) return;
  if (input.orgId !== undefined) throw forbidden('orgId: you cannot move yourself to another organisation; ask another administrator');
  if (input.roleIds === undefined) return;
  const rows = await run.rows<{ role_id: number }>(qb.selectFrom('user_role').select('role_id').where('user_id', '=', userId).compile());
  const current = new Set(rows.map((r) => r.role_id));
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
  resetMfa: "Only a super administrator can reset the second factor of a user who holds the superAdmin role",
  grantRole: 'Only a super administrator can grant or revoke the superAdmin role or change the roles of a user who holds it',
} as const;

/** "Own account": resetPassword is for other users' passwords. */
export const OWN_PASSWORD =
  'id: you cannot reset your own password here; change it with sysLoginUser/updatePassword, which asks for the old password';

const loginNameTaken = (name: string) => `loginName: '${name}' is already taken`;

/** A grant naming a role that does not exist (any more) fails its batch on the foreign key. */
const unknownRoles = (run: Runner, roleIds: readonly number[]) => async () => {
  const missing = await missingIds(run, 'roles', roleIds);
  return badRequest(unknownIdsMessage('roleIds', 'role', missing));
};

export async function userDetail(run: Runner, id: number) {
  return toUser(await requireUser(run, id));
}

/** The messages of a refused write on a user, shared by its operations. */
const userErrors = (superAdminOnlyMsg: string, more: WriteErrors = {}): WriteErrors => ({
  ...more,
  messages: { super_admin_only: superAdminOnlyMsg, out_of_scope: 'User not found', outside_authority: USER_OUTSIDE, ...more.messages },
});

/**
 * Creates the user and its role grants in one atomic write: an unknown role leaves no user behind.
 * Only a super admin may add a user holding the superAdmin role (403).
 */
export async function addUser(deps: Ports, run: Runner, input: AddUserInput) {
  // No password sent: the initial one (system parameter), read with the caller's auth statement.
  const password = input.password ?? (await initialPassword(deps, run));
  const passwordField = input.password === undefined ? `password (${BUILT_IN.initPassword})` : 'password';
  // The caller first: the plan depends on who they are, and the hash below is not for strangers.
  const auth = await run.caller();
  const roleIds = input.roleIds ?? [];
  // The early checks, each enforced by a guard (or the org's foreign key) of the batch below: they
  // run only when the batch is refused, for its precise answer.
  const checks = async () => {
    // A field that does another operation's job needs that operation's code (grantRole).
    if (roleIds.length > 0 && !(await callerHolds(run, 'sys:user:grantRole'))) {
      throw forbidden('roleIds: granting roles through add also requires the permission sys:user:grantRole');
    }
    await assertMayTouchSuperAdmin(run, auth, { roleIds }, ONLY_SUPER.add);
    await assertMayGrantRoles(run, auth, roleIds);
    await assertOrgAssignable(run, auth, input.orgId ?? null);
  };
  try {
    assertPasswordAllowed(password, input.loginName, deps.config.PASSWORD_MIN_LENGTH, passwordField);
  } catch (err) {
    await checks(); // a refusal they give came first
    throw err;
  }
  // A taken login name is answered by the unique index (409) when the batch runs: no read before.
  const hash = await deps.hasher.hash(password);
  const now = isoNow(deps.clock);
  const added = sql`(SELECT nu.id FROM users nu WHERE nu.login_name = ${input.loginName})`;
  const batch: CompiledQuery[] = [
    ...(roleIds.length > 0 ? holdsGuard(auth, 'sys:user:grantRole') : []),
    ...superAdminOnly(auth, { roleIds }),
    // The new user holds nothing yet: every role granted is a change.
    ...changedRolesHeldGuard(auth, sql`NULL`, roleIds),
    qb
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
    batch.push(
      sql`INSERT INTO user_role (user_id, role_id) SELECT u.id, v.value FROM users u, json_each(${JSON.stringify(roleIds)}) v
        WHERE u.login_name = ${input.loginName}`.compile(qb),
    );
  }
  if (input.postIds !== undefined) batch.push(...userPostStatements(added, input.postIds));
  // After the writes: the new user is inside the caller's scope (which is what assertOrgAssignable
  // asks of the organisation) and authority (a grant racing the request, e.g. a role gaining a menu
  // the caller lacks, fails the whole batch).
  batch.push(...userStaysInScopeGuard(auth, added), ...userAuthorityGuard(auth, added));
  // The new row as the answer, read by the batch itself (no second round trip).
  batch.push(userRowQuery(added));
  return run.write({
    batch,
    errors: userErrors(ONLY_SUPER.add, {
      unique: loginNameTaken(input.loginName),
      foreignKey: async () => (input.orgId != null && !(await orgExists(run, input.orgId)) ? unknownOrg(input.orgId) : unknownRoles(run, roleIds)()),
    }),
    explain: checks,
    finish: (results) => toUser(answered(results)),
  });
}

const orgExists = async (run: Runner, orgId: number) => (await run.first(qb.selectFrom('orgs').select('id').where('id', '=', orgId).compile())) !== undefined;
const unknownOrg = (orgId: number) => badRequest(`orgId: organisation ${orgId} does not exist`);

/** The user row a write batch read back as its last statement (gone: 404). */
function answered(results: { rows: unknown[] }[]): PublicUserRow {
  const row = lastRow<PublicUserRow>(results);
  if (!row) throw notFound('User not found');
  return row;
}

/**
 * Partial update under the version check; status and roleIds changes obey the last-super-admin
 * guard. `roleIds` also needs sys:user:grantRole and `status` sys:user:changeStatus (403), so edit
 * is no back door around those codes; a user holding the superAdmin role, or a grant of it, is for
 * super admins only (403).
 */
export async function editUser(deps: Ports, run: Runner, input: EditUserInput) {
  const auth = await run.caller();
  // The current row is read first only when the edit depends on it (a rename, a move, an edit of
  // oneself by someone not a super admin); otherwise existence, scope and every rule of the checks
  // below are guards of the write batch, which also reads the answer back: one round trip, and the
  // checks run only when the batch is refused, for its precise answer.
  const readFirst = input.loginName !== undefined || input.orgId !== undefined || (!auth.isSuperAdmin && input.id === auth.userId);
  const touch = { userIds: [input.id], roleIds: input.roleIds ?? [] };
  const checks = async () => {
    const current = readFirst || !auth.isSuperAdmin ? await requireUser(run, input.id) : undefined;
    if (current && input.loginName !== undefined && input.loginName.toLowerCase() !== current.login_name.toLowerCase()) {
      await assertNameIsNotPassword(deps, run, input.id, input.loginName);
    }
    if (input.roleIds !== undefined && !(await callerHolds(run, 'sys:user:grantRole'))) {
      throw forbidden('roleIds: changing roles through edit also requires the permission sys:user:grantRole');
    }
    if (input.status !== undefined && !(await callerHolds(run, 'sys:user:changeStatus'))) {
      throw forbidden('status: changing the status through edit also requires the permission sys:user:changeStatus');
    }
    await assertMayTouchSuperAdmin(run, auth, touch, ONLY_SUPER.edit);
    // (a super admin may grant anything: no read of the current roles)
    if (input.roleIds !== undefined && !auth.isSuperAdmin) await assertMayGrantRoles(run, auth, await changedRoles(run, input.id, input.roleIds));
    if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
    const moving = current !== undefined && input.orgId !== undefined && input.orgId !== current.org_id;
    await assertNotSelfPromotion(run, auth, input.id, { roleIds: input.roleIds, orgId: moving ? input.orgId : undefined });
    if (moving) await assertOrgAssignable(run, auth, input.orgId ?? null);
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
  const batch: CompiledQuery[] = [
    userExistsGuard(input.id),
    ...userScopeGuard(auth, [input.id]),
    ...superAdminOnly(auth, touch),
    ...userAuthorityGuard(auth, target),
    // The checks' code and grant rules, judged on the state before the writes (none for a super admin).
    ...(input.roleIds !== undefined ? holdsGuard(auth, 'sys:user:grantRole') : []),
    ...(input.status !== undefined ? holdsGuard(auth, 'sys:user:changeStatus') : []),
    ...(input.roleIds !== undefined ? changedRolesHeldGuard(auth, sql`${input.id}`, input.roleIds) : []),
    ...selfGrantGuard(auth, input.id, { roleIds: input.roleIds, orgId: input.orgId }),
    versionGuard('users', input.id, input.version),
    qb
      .updateTable('users')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') batch.push(revokeSessions([input.id], now));
  if (input.roleIds !== undefined) batch.push(...grantStatements(input.id, input.roleIds));
  if (input.postIds !== undefined) batch.push(...userPostStatements(sql`${input.id}`, input.postIds));
  if (input.status === 'disabled' || input.roleIds !== undefined) batch.push(lastSuperAdminGuard());
  if (moving) batch.push(...userStaysInScopeGuard(auth, target));
  if (input.roleIds !== undefined) batch.push(...userAuthorityGuard(auth, target));
  batch.push(userRowQuery(sql`(${input.id})`));
  return run.write({
    batch,
    errors: userErrors(ONLY_SUPER.edit, {
      unique: loginNameTaken(input.loginName ?? ''),
      foreignKey: async () =>
        input.orgId !== undefined && input.orgId !== null && !(await orgExists(run, input.orgId)) ? unknownOrg(input.orgId) : unknownRoles(run, input.roleIds ?? [])(),
    }),
    // Read first: the checks have run already.
    explain: readFirst ? undefined : checks,
    finish: (results) => toUser(answered(results)),
  });
}

/**
 * A new login name must not be the user's current password (the password rule, seen from the
 * other side). The check is a password guess, so it is throttled like one: an editor cannot use
 * renames to test candidate passwords of someone else's account. The version guard of the write
 * covers a password change in between (changes bump the version).
 */
async function assertNameIsNotPassword(deps: Ports, run: Runner, userId: number, loginName: string) {
  const key = `rename-check:${userId}`;
  const lockMs = await lockedFor(run, deps.clock, [key]);
  if (lockMs > 0) throw tooMany(lockMs / 1000, 'Too many login name changes for this user, try again later');
  await hit(run, deps.clock, key, NAME_RULE);
  const row = await run.first<{ password_hash: string }>(qb.selectFrom('users').select('password_hash').where('id', '=', userId).compile());
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
export async function deleteUsers(run: Runner, ids: number[]) {
  const auth = await run.caller();
  if (ids.includes(auth.userId)) throw badRequest('ids: you cannot delete your own account');
  // Users outside the caller's scope are treated exactly like unknown ids: skipped. Acted on are
  // the ids in scope when the batch runs; every rule is a guard in it, so nothing is read before
  // it, and the early checks run only to explain a refusal.
  const checks = async () => {
    const visible = auth.isSuperAdmin
      ? ids
      : (
          await run.rows<{ id: number }>(
            qb
              .selectFrom('users')
              .select('id')
              .where('id', 'in', idList(ids))
              .where(userInScope(auth.userId, sql.ref('users.id'), sql.ref('users.org_id')))
              .compile(),
          )
        ).map((r) => r.id);
    if (visible.length > 0) await assertMayTouchSuperAdmin(run, auth, { userIds: visible }, ONLY_SUPER.delete);
  };
  const targets = auth.isSuperAdmin
    ? idList(ids)
    : sql<number>`(SELECT dv.id FROM users dv WHERE dv.id IN ${idList(ids)} AND ${userInScope(auth.userId, sql.ref('dv.id'), sql.ref('dv.org_id'))})`;
  await run.write(
    writeOf(
      [
        ...superAdminOnlyAmong(auth, targets),
        ...userAuthorityGuard(auth, targets),
        qb.deleteFrom('sessions').where('user_id', 'in', targets).compile(),
        qb.deleteFrom('user_role').where('user_id', 'in', targets).compile(),
        qb.deleteFrom('users').where('id', 'in', targets).compile(),
        lastSuperAdminGuard(),
      ],
      userErrors(ONLY_SUPER.delete),
      checks,
    ),
  );
}

/**
 * Enables or disables a user; disabling revokes the user's sessions in the same write. A holder of
 * the superAdmin role only by a super admin (403).
 */
const STATUS_CODE_NEEDED = 'status: changing it requires the permission sys:user:changeStatus';

export async function changeUserStatus(deps: Ports, run: Runner, input: { id: number; status: 'enabled' | 'disabled' }) {
  const auth = await run.caller();
  if (input.status === 'disabled' && input.id === auth.userId) throw badRequest('status: you cannot disable your own account');
  const touch = { userIds: [input.id] };
  // Enforced by the guards of the batch; run only to explain a refusal.
  const checks = async () => {
    if (!(await callerHolds(run, 'sys:user:changeStatus'))) throw forbidden(STATUS_CODE_NEEDED);
    await requireUser(run, input.id);
    await assertMayTouchSuperAdmin(run, auth, touch, ONLY_SUPER.changeStatus);
  };
  const now = isoNow(deps.clock);
  const batch: CompiledQuery[] = [
    // The operation's own code, whichever route asked (a dialect may map a status switch onto a
    // route guarded by another code, e.g. vben's PUT user).
    ...holdsGuard(auth, 'sys:user:changeStatus'),
    userExistsGuard(input.id),
    ...userScopeGuard(auth, [input.id]),
    ...superAdminOnly(auth, touch),
    ...userAuthorityGuard(auth, idList([input.id])),
    qb
      .updateTable('users')
      .set((eb) => ({ status: input.status, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', input.id)
      .compile(),
  ];
  if (input.status === 'disabled') batch.push(revokeSessions([input.id], now), lastSuperAdminGuard());
  await run.write(writeOf(batch, userErrors(ONLY_SUPER.changeStatus, { messages: { code_required: STATUS_CODE_NEEDED } }), checks));
}

/**
 * Sets a new password (policy checked against the user's login name) and ends all the user's
 * sessions; never the caller's own (400: updatePassword asks for the old one). A holder of the superAdmin role only by a super admin (403): else a known password
 * would be a way into the super admin's account.
 */
export async function resetPassword(deps: Ports, run: Runner, input: { id: number; newPassword: string }) {
  // Own account: a stolen token must not take the account over for good (the caller's verdict,
  // 401/403, still outranks this answer: http/auth.ts).
  if (input.id === run.userId) throw badRequest(OWN_PASSWORD);
  // The user is read first (the password rule needs their login name), with the caller's auth
  // statement at its head; the super-admin rule is a guard of the batch, checked early only to
  // explain a refusal or a refused password.
  const user = await requireUser(run, input.id);
  const auth = await run.caller();
  const touch = { userIds: [input.id] };
  const checks = () => assertMayTouchSuperAdmin(run, auth, touch, ONLY_SUPER.resetPassword);
  try {
    assertPasswordAllowed(input.newPassword, user.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
  } catch (err) {
    await checks();
    throw err;
  }
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await run.write(
    writeOf(
      [
        ...superAdminOnly(auth, touch),
        ...userScopeGuard(auth, [input.id]),
        ...userAuthorityGuard(auth, idList([input.id])),
        qb
          .updateTable('users')
          .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
          .where('id', '=', input.id)
          .compile(),
        revokeSessions([input.id], now),
      ],
      userErrors(ONLY_SUPER.resetPassword),
      checks,
    ),
  );
}

/**
 * Removes every second factor of another user (TOTP, passkeys, recovery codes, challenges under
 * way) and ends their sessions: for a user who lost their device. Scope and containment as for a
 * password reset; a super admin's only by a super admin; not one's own account (400).
 */
export async function resetMfa(deps: Ports, run: Runner, input: { id: number }) {
  if (input.id === run.userId) throw badRequest('id: you cannot reset your own second factor here; use /app/sysLoginUser/mfa/*');
  const auth = await run.caller();
  const touch = { userIds: [input.id] };
  const checks = async () => {
    await requireUser(run, input.id);
    await assertMayTouchSuperAdmin(run, auth, touch, ONLY_SUPER.resetMfa);
  };
  const now = isoNow(deps.clock);
  await run.write(
    writeOf(
      [
        userExistsGuard(input.id),
        ...userScopeGuard(auth, [input.id]),
        ...superAdminOnly(auth, touch),
        ...userAuthorityGuard(auth, idList([input.id])),
        qb.deleteFrom('mfa_totp').where('user_id', '=', input.id).compile(),
        qb.deleteFrom('mfa_passkeys').where('user_id', '=', input.id).compile(),
        qb.deleteFrom('mfa_recovery_codes').where('user_id', '=', input.id).compile(),
        qb.deleteFrom('mfa_challenges').where('user_id', '=', input.id).compile(),
        qb.updateTable('users').set({ mfa_enabled: 0 }).where('id', '=', input.id).compile(),
        revokeSessions([input.id], now),
      ],
      userErrors(ONLY_SUPER.resetMfa),
      checks,
    ),
  );
}

/**
 * Replaces the user's roles atomically; the last-super-admin guard runs in the same write. Only a
 * super admin may grant or revoke the superAdmin role or change a holder's roles (403).
 */
export async function grantRoles(run: Runner, input: { userId: number; roleIds: number[] }) {
  const auth = await run.caller();
  // One batch: existence, scope and every rule of the checks below are guards in it. The checks
  // read first only for someone not a super admin granting to themselves (self-promotion reads
  // their roles); otherwise they run only to explain a refused batch.
  const touch = { userIds: [input.userId], roleIds: input.roleIds };
  const checks = async () => {
    if (!auth.isSuperAdmin) await requireUser(run, input.userId);
    await assertMayTouchSuperAdmin(run, auth, touch, ONLY_SUPER.grantRole);
    await assertNotSelfPromotion(run, auth, input.userId, { roleIds: input.roleIds });
    if (!auth.isSuperAdmin) await assertMayGrantRoles(run, auth, await changedRoles(run, input.userId, input.roleIds));
  };
  const readFirst = !auth.isSuperAdmin && input.userId === auth.userId;
  if (readFirst) await checks();
  const target = idList([input.userId]);
  const batch = [
    userExistsGuard(input.userId),
    ...userScopeGuard(auth, [input.userId]),
    ...superAdminOnly(auth, touch),
    ...userAuthorityGuard(auth, target),
    ...changedRolesHeldGuard(auth, sql`${input.userId}`, input.roleIds),
    ...selfGrantGuard(auth, input.userId, { roleIds: input.roleIds }),
    ...grantStatements(input.userId, input.roleIds),
    ...userAuthorityGuard(auth, target),
    lastSuperAdminGuard(),
  ];
  await run.write(
    writeOf(
      batch,
      userErrors(ONLY_SUPER.grantRole, {
        foreignKey: async () => ((await findUser(run, input.userId)) ? unknownRoles(run, input.roleIds)() : notFound('User not found')),
      }),
      readFirst ? undefined : checks,
    ),
  );
}

const USER_ROLES = prepare<{ id: number }>((p) => qb.selectFrom('user_role').select('role_id').where('user_id', '=', p.id).orderBy('role_id'));

export function ownRoles(run: Runner, id: number): Promise<number[]> {
  // The user (in the caller's scope) and their role ids in one read: one round trip with the auth
  // row on D1. The ids are only answered when the user row says the caller may see the user.
  return run.read({
    reads: [userInScopeStatement(run, id), USER_ROLES.bind({ id })],
    finish: ([users, rows]) => {
      if (!users?.length) throw notFound('User not found');
      return (rows as { role_id: number }[]).map((r) => r.role_id);
    },
  });
}
