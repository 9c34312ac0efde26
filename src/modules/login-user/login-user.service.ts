import type { Ports } from '../../core/ports.ts';
import { badRequest, notFound, tooMany } from '../../core/errors.ts';
import { hitQuery, lockedForQuery, lockedMs, NAME_RULE } from '../auth/index.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { perApp } from '../../core/per-app.ts';
import { isoNow } from '../../core/time.ts';
import { buildTree } from '../../core/tree.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { staleSql, versionOf, versionRead, VersionedCache } from '../../db/versions.ts';
import { FIND_USER_SQL, toUser, userRowQuery, type PublicUserRow } from '../users/index.ts';
import { sql } from 'kysely';
import { callerScopeOf, callerScopeQuery } from '../../access/data-scope.ts';
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
 * The SPA calls this on every page load. The menu table and what a user's roles derive from it
 * (their codes and routes) are cached per app and version (db/versions.ts): a request reads the
 * menus version in its batch, with the caller's auth statement, and reads the menus and the
 * user's grants only when the version moved or the user's entry is missing (conditions in SQL:
 * one round trip either way). Every menu, grant and role write bumps the version in its own
 * transaction (migrations/0018), so a change applies on the very next request. `+?` keeps the
 * planner from re-preparing the joins on every call.
 */
const ROLE_CODES_SQL = `SELECT r.code AS code FROM user_role ur JOIN roles r ON r.id = ur.role_id
  WHERE ur.user_id = +? AND r.status = 'enabled' ORDER BY r.sort, r.id`;
const MENUS_IF_STALE_SQL = `SELECT id, parent_id, title, type, path, component, icon, permission, sort, hidden, status, name, keep_alive
  FROM menus WHERE ${staleSql} ORDER BY sort, id`;
const GRANTED_IF_NEEDED_SQL = `SELECT DISTINCT rm.menu_id AS menu_id FROM user_role ur
  JOIN roles r ON r.id = ur.role_id AND r.status = 'enabled' JOIN role_menu rm ON rm.role_id = r.id
  WHERE ur.user_id = +? AND (+? OR ${staleSql})`;

type MenuRow = { id: number; parent_id: number; title: string; type: string; path: string | null; component: string | null; icon: string | null; permission: string | null; sort: number; hidden: number; status: string; name: string | null; keep_alive: number };

/** What getLoginUserInformation derives from the menus for one user: their codes and their route tree. */
interface UserMenus {
  permissions: string[];
  menus: RouterMenu[];
}

/** Per app (its deps), the menus of the last version read, and per user what their roles derive from them. */
const MENU_CACHE = Symbol('menu cache');
const USERS_CACHED = 10_000;
const menuCache = (deps: Ports) => perApp(deps, MENU_CACHE, () => new VersionedCache<MenuRow[], UserMenus>(USERS_CACHED));

/** A user's codes and route tree from the menus and the ids of the menus their enabled roles grant ('all': a super admin). */
function userMenus(menus: MenuRow[], granted: Set<number> | 'all'): UserMenus {
  let permissions = ['*'];
  if (granted !== 'all') {
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
  return { permissions, menus: tree };
}

export function loginUserInformation(deps: Ports, run: Runner) {
  const me = run.userId;
  const cache = menuCache(deps);
  // The snapshot this request builds on (a concurrent refresh cannot take it away) and whether it
  // already holds this user's menus.
  const key = String(me);
  const held = cache.held;
  const heldVersion = held?.version ?? -1;
  const heldMine = held?.derived.get(key);
  return run.read({
    reads: [
      { sql: FIND_USER_SQL, parameters: [me] },
      { sql: ROLE_CODES_SQL, parameters: [me] },
      callerScopeQuery(me),
      versionRead('menus'),
      { sql: MENUS_IF_STALE_SQL, parameters: ['menus', heldVersion] },
      { sql: GRANTED_IF_NEEDED_SQL, parameters: [me, heldMine ? 0 : 1, 'menus', heldVersion] },
    ],
    finish: ([userRows, roleRows, scopeRows, versionRows, menuRows, grantedRows]) => {
      const user = userRows?.[0] as PublicUserRow | undefined;
      if (!user) throw notFound('User not found');
      const snapshot = cache.at(versionOf(versionRows), held, (menuRows ?? []) as MenuRow[]);
      // Held for this version, or derived now from the grants the batch read (it read them because
      // the version moved or the entry was missing). Super admin or not is part of what the
      // version covers (grants of roles, role codes and statuses); the runner judged the auth row
      // before handing out these rows, so it is known.
      let mine = snapshot === held ? heldMine : undefined;
      if (!mine) {
        const granted = run.knownSuper ? 'all' : new Set(((grantedRows ?? []) as { menu_id: number }[]).map((r) => r.menu_id));
        mine = cache.derive(snapshot, key, userMenus(snapshot.rows, granted));
      }
      const scope = callerScopeOf(scopeRows?.[0]);
      const org = user.org_id === null ? null : { id: user.org_id, name: user.org_name ?? '' };
      // The effective data scope: `all`, or the organisations it covers and whether it includes self.
      const dataScope = scope.all ? { all: true, orgIds: [], self: true } : scope;
      const roles = (roleRows ?? []) as { code: string }[];
      return { user: toUser(user), roles: roles.map((r) => r.code), permissions: mine.permissions, menus: mine.menus, org, dataScope };
    },
  });
}

export async function updateInfo(deps: Ports, run: Runner, input: ProfileInput) {
  const set: Record<string, unknown> = {};
  if (input.nickName !== undefined) set.nick_name = input.nickName;
  if (input.email !== undefined) set.email = input.email;
  if (input.phone !== undefined) set.phone = input.phone;
  if (input.avatar !== undefined) set.avatar = input.avatar;
  const me = run.userId;
  // The write and the answer in one batch.
  return run.write({
    batch: [
      qb
        .updateTable('users')
        .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
        .where('id', '=', me)
        .compile(),
      userRowQuery(sql`${me}`),
    ],
    // Only the token's user: the caller's auth statement travels in this batch.
    anyCaller: true,
    finish: ([, read]) => {
      const row = read?.rows[0] as PublicUserRow | undefined;
      if (!row) throw notFound('User not found');
      return toUser(row);
    },
  });
}

/** Changes the caller's password and ends every other session of theirs; this one stays. */
export async function updatePassword(deps: Ports, run: Runner, input: { oldPassword: string; newPassword: string }) {
  // A stolen token must not become a way to guess the password: wrong old passwords are throttled
  // like logins, counted before the hash so a parallel burst is refused as it arrives. One write
  // batch (headed by the caller's check): the row, the lock state, and the count of this attempt,
  // taken unless the key is locked (a locked key is refused without extending its lock).
  const me = run.userId;
  const key = `password-change:${me}`;
  const [rowRes, lockRes, countRes] = await run.write(
    resultsOf(
      [
        qb.selectFrom('users').select(['password_hash', 'login_name']).where('id', '=', me).compile(),
        lockedForQuery(deps.clock, [key]),
        hitQuery(deps.clock, key, NAME_RULE, { unlessLocked: true }).compile(),
      ],
      // Only the token's user: the caller's auth statement travels in this batch.
      { anyCaller: true },
    ),
  );
  const auth = await run.caller();
  const row = rowRes?.rows[0] as { password_hash: string; login_name: string } | undefined;
  if (!row) throw notFound('User not found');
  const lockMs = lockedMs(deps.clock, lockRes?.rows);
  const counted = countRes?.rows[0] as { count: number; locked_until: string | null } | undefined;
  if (lockMs > 0 || !counted) throw tooMany(lockMs / 1000, 'Too many wrong passwords, try again later');
  if (counted.count > NAME_RULE.limit) throw tooMany((Date.parse(counted.locked_until ?? '') - deps.clock.now()) / 1000 || 1, 'Too many wrong passwords, try again later');
  if (!(await deps.hasher.verify(row.password_hash, input.oldPassword))) throw badRequest('oldPassword: is incorrect');
  // The right old password clears the counter: in the write's batch, or on its own when the new
  // password is refused (the counter is cleared either way, as before).
  const clear = qb.deleteFrom('rate_limits').where('key', '=', key).compile();
  try {
    assertPasswordAllowed(input.newPassword, row.login_name, deps.config.PASSWORD_MIN_LENGTH, 'newPassword');
    if (input.newPassword === input.oldPassword) throw badRequest('newPassword: must differ from the old password');
  } catch (err) {
    await run.record([clear]);
    throw err;
  }
  const hash = await deps.hasher.hash(input.newPassword);
  const now = isoNow(deps.clock);
  await run.write({
    batch: [
      clear,
      qb
        .updateTable('users')
        .set((eb) => ({ password_hash: hash, version: eb('version', '+', 1), updated_at: now }))
        .where('id', '=', auth.userId)
        .compile(),
      qb
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('user_id', '=', auth.userId)
        .where('id', '!=', auth.sessionId)
        .where('revoked_at', 'is', null)
        .compile(),
    ],
    finish: () => undefined,
  });
}
