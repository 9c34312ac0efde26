import type { Deps } from '../../deps.ts';
import type { AuthUser } from '../../core/caller.ts';
import { badRequest, notFound, tooMany } from '../../core/errors.ts';
import { hit, lockedFor } from '../auth/rate-limit.ts';
import { NAME_RULE } from '../auth/login.service.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { isoNow } from '../../core/time.ts';
import { buildTree } from '../../core/tree.ts';
import { toUser } from '../users/user.model.ts';
import { FIND_USER_SQL, findUser, userRowQuery } from '../users/users.repo.ts';
import { sql } from 'kysely';
import type { PublicUserRow } from '../users/user.model.ts';
import { callerScopeOf, callerScopeQuery } from '../access/data-scope.ts';
import type { ProfileInput } from './login-user.schemas.ts';

export interface RouterMenu {
  id: number;
  parentId: number;
  title: string;
  type: 'directory' | 'menu';
  path: string | null;
  component: string | null;
  icon: string | null;
  sort: number;
  hidden: boolean;
  /** Stable route name (unique): the menu's own, or `Menu<id>`. */
  name: string;
  keepAlive: boolean;
  children: RouterMenu[];
}

async function loadUser(deps: Deps, userId: number) {
  const row = await findUser(deps, userId);
  if (!row) throw notFound('User not found');
  return row;
}

/**
 * The menus an SPA may route to: enabled directories and menus that are granted, or that lead to a
 * granted item (a granted button shows its page). A disabled ancestor hides its whole branch.
 */
function visibleMenus(
  all: { id: number; parent_id: number; type: string; status: string }[],
  granted: Set<number> | 'all',
): Set<number> {
  const byId = new Map(all.map((m) => [m.id, m]));
  const enabledPath = (id: number): boolean => {
    for (let m = byId.get(id), hops = 0; m && hops < 64; m = byId.get(m.parent_id), hops++) {
      if (m.status !== 'enabled') return false;
      if (m.parent_id === 0) return true;
    }
    return false;
  };
  const visible = new Set<number>();
  for (const m of all) {
    if (granted !== 'all' && !granted.has(m.id)) continue;
    if (!enabledPath(m.id)) continue;
    for (let cur = byId.get(m.id), hops = 0; cur && hops < 64; cur = byId.get(cur.parent_id), hops++) visible.add(cur.id);
  }
  return visible;
}

/*
 * The SPA calls this on every page load, so it reads through cached plain SQL (deps.read) rather
 * than the query builder. `+?` keeps the planner from re-preparing the joins on every call.
 */
const ROLE_CODES_SQL = `SELECT r.code AS code FROM user_role ur JOIN roles r ON r.id = ur.role_id
  WHERE ur.user_id = +? AND r.status = 'enabled' ORDER BY r.sort, r.id`;
const ALL_MENUS_SQL = `SELECT id, parent_id, title, type, path, component, icon, permission, sort, hidden, status, name, keep_alive
  FROM menus ORDER BY sort, id`;
const GRANTED_MENUS_SQL = `SELECT DISTINCT rm.menu_id AS menu_id FROM user_role ur
  JOIN roles r ON r.id = ur.role_id AND r.status = 'enabled' JOIN role_menu rm ON rm.role_id = r.id
  WHERE ur.user_id = +?`;

type MenuRow = { id: number; parent_id: number; title: string; type: string; path: string | null; component: string | null; icon: string | null; permission: string | null; sort: number; hidden: number; status: string; name: string | null; keep_alive: number };

export async function loginUserInformation(deps: Deps, auth: AuthUser) {
  // One readMany: on D1 one batch, which also carries the request's deferred auth row (so the
  // whole call is one round trip); isSuperAdmin is known once it has answered.
  const scopeQuery = callerScopeQuery(auth.userId);
  const [userRows, roleRows, menuRows, grantedRowsAll, scopeRows] = await deps.readMany([
    { sql: FIND_USER_SQL, parameters: [auth.userId] },
    { sql: ROLE_CODES_SQL, parameters: [auth.userId] },
    { sql: ALL_MENUS_SQL, parameters: [] },
    { sql: GRANTED_MENUS_SQL, parameters: [auth.userId] },
    scopeQuery,
  ]);
  const user = userRows?.[0] as PublicUserRow | undefined;
  if (!user) throw notFound('User not found');
  const roles = (roleRows ?? []) as { code: string }[];
  const menus = (menuRows ?? []) as MenuRow[];
  const grantedRows = (grantedRowsAll ?? []) as { menu_id: number }[];
  const scope = callerScopeOf(scopeRows?.[0]);
  let granted: Set<number> | 'all' = 'all';
  let permissions = ['*'];
  if (!auth.isSuperAdmin) {
    granted = new Set(grantedRows.map((r) => r.menu_id));
    const codes = new Set<string>();
    for (const m of menus) if (granted.has(m.id) && m.status === 'enabled' && m.permission) codes.add(m.permission);
    permissions = [...codes].sort();
  }
  const visible = visibleMenus(menus, granted);
  const tree = buildTree(
    menus
      .filter((m) => m.type !== 'button' && visible.has(m.id))
      .map((m) => ({
        id: m.id,
        parentId: m.parent_id,
        title: m.title,
        type: m.type as 'directory' | 'menu',
        path: m.path,
        component: m.component,
        icon: m.icon,
        sort: m.sort,
        hidden: m.hidden === 1,
        name: m.name ?? `Menu${m.id}`,
        keepAlive: m.keep_alive === 1,
      })),
  ) as RouterMenu[];
  const org = user.org_id === null ? null : { id: user.org_id, name: user.org_name ?? '' };
  // The effective data scope: `all`, or the organisations it covers and whether it includes self.
  const dataScope = scope.all ? { all: true, orgIds: [], self: true } : scope;
  return { user: toUser(user), roles: roles.map((r) => r.code), permissions, menus: tree, org, dataScope };
}

export async function updateInfo(deps: Deps, auth: AuthUser, input: ProfileInput) {
  const set: Record<string, unknown> = {};
  if (input.nickName !== undefined) set.nick_name = input.nickName;
  if (input.email !== undefined) set.email = input.email;
  if (input.phone !== undefined) set.phone = input.phone;
  if (input.avatar !== undefined) set.avatar = input.avatar;
  // The write and the answer in one batch (one round trip on D1).
  const [, read] = await deps.atomic([
    deps.db
      .updateTable('users')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', auth.userId)
      .compile(),
    userRowQuery(deps, sql`${auth.userId}`),
  ]);
  const row = read?.rows[0] as PublicUserRow | undefined;
  if (!row) throw notFound('User not found');
  return toUser(row);
}

/** Changes the caller's password and ends every other session of theirs; this one stays. */
export async function updatePassword(deps: Deps, auth: AuthUser, input: { oldPassword: string; newPassword: string }) {
  // A stolen token must not become a way to guess the password: wrong old passwords are throttled
  // like logins, counted before the hash so a parallel burst is refused as it arrives.
  const key = `password-change:${auth.userId}`;
  // The row and the lock state are independent reads: sent together (one round trip).
  const [row, lockMs] = await Promise.all([
    deps.db.selectFrom('users').select(['password_hash', 'login_name']).where('id', '=', auth.userId).executeTakeFirst(),
    lockedFor(deps, [key]),
  ]);
  if (!row) throw notFound('User not found');
  if (lockMs > 0) throw tooMany(lockMs / 1000, 'Too many wrong passwords, try again later');
  const counted = await hit(deps, key, NAME_RULE);
  if (counted.count > NAME_RULE.limit) throw tooMany((Date.parse(counted.lockedUntil ?? '') - deps.clock.now()) / 1000 || 1, 'Too many wrong passwords, try again later');
  if (!(await deps.hasher.verify(row.password_hash, input.oldPassword))) throw badRequest('oldPassword: is incorrect');
  // The right old password clears the counter: in the write's batch, or on its own when the new
  // password is refused (the counter is cleared either way, as before).
  const clear = deps.db.deleteFrom('rate_limits').where('key', '=', key).compile();
  try {
    assertPasswordAllowed(input.newPassword, row.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
    if (input.newPassword === input.oldPassword) throw badRequest('newPassword: must differ from the old password');
  } catch (err) {
    await deps.atomic([clear]);
    throw err;
  }
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await deps.atomic([
    clear,
    deps.db
      .updateTable('users')
      .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
      .where('id', '=', auth.userId)
      .compile(),
    deps.db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('user_id', '=', auth.userId)
      .where('id', '!=', auth.sessionId)
      .where('revoked_at', 'is', null)
      .compile(),
  ]);
}
