// Adapter for soybean-admin (dynamic route mode): our login, user information, codes and menu
// tree in the shapes of its auth and route APIs.
// Shapes transcribed from the template's own type definitions (repository soybeanjs/soybean-admin):
//   src/typings/api.d.ts     Api.Auth.LoginToken {token, refreshToken}, Api.Auth.UserInfo {userId, userName, roles},
//                            Api.Route.MenuRoute (ElegantConstRoute + id), Api.Route.UserRoute {routes, home}
//   src/typings/router.d.ts  RouteMeta {title, i18nKey, icon, order, keepAlive, hideInMenu, …}
//   ElegantConstRoute (@elegant-router/types): {name, path, component ('layout.base', 'view.<key>',
//   'layout.base$view.<key>'), meta, redirect, children}; route keys are path segments joined by '_'.
// Copy it with common.ts into the template; it imports nothing else (types only, so no bundler setting is needed).
import type { LoginData, LoginUserInformation, MenuNode } from './common.ts';

export interface SoybeanLoginToken {
  token: string;
  refreshToken: string;
}

export interface SoybeanUserInfo {
  userId: string;
  userName: string;
  roles: string[];
  /** The codes soybean's `hasAuth` checks (newer versions call them buttons). */
  buttons: string[];
}

export interface SoybeanRouteMeta {
  title: string;
  i18nKey?: string | null;
  icon?: string;
  order?: number | null;
  keepAlive?: boolean | null;
  hideInMenu?: boolean | null;
}

export interface SoybeanMenuRoute {
  id: string;
  name: string;
  path: string;
  component: string;
  redirect?: string;
  meta: SoybeanRouteMeta;
  children?: SoybeanMenuRoute[];
}

export interface SoybeanUserRoute {
  routes: SoybeanMenuRoute[];
  home: string;
}

/** Soybean has no refresh token: the session token lives 30 days, so it is sent for both. */
export const soybeanLogin = (data: LoginData): SoybeanLoginToken => ({ token: data.token, refreshToken: data.token });

export function soybeanUserInfo(info: LoginUserInformation): SoybeanUserInfo {
  return {
    userId: String(info.user.id),
    userName: info.user.loginName,
    roles: info.roles.map((r) => (r === 'superAdmin' ? 'R_SUPER' : r)),
    buttons: info.permissions,
  };
}

/** `/permission/role` → `permission_role`: soybean's route key (and view key) for a path. */
export const routeKey = (path: string) => path.replace(/^\/+|\/+$/g, '').replace(/\//g, '_') || 'root';

function toRoute(n: MenuNode, root: boolean): SoybeanMenuRoute {
  const path = n.path ?? `/${n.name}`;
  const key = routeKey(path);
  const meta: SoybeanRouteMeta = { title: n.title, i18nKey: null, order: n.sort, keepAlive: n.keepAlive, hideInMenu: n.hidden };
  if (n.icon) meta.icon = n.icon;
  const isDir = n.type === 'directory';
  const route: SoybeanMenuRoute = {
    id: String(n.id),
    name: key,
    path,
    // A root page gets the base layout around its view; a root directory is the layout itself.
    component: isDir ? (root ? 'layout.base' : '') : root ? `layout.base$view.${key}` : `view.${key}`,
    meta,
  };
  if (n.children.length) {
    route.children = n.children.map((c) => toRoute(c, false));
    route.redirect = route.children[0]!.path;
  }
  return route;
}

/** The first visible menu (not a directory) in tree order: a sensible home page. */
export function firstPage(nodes: MenuNode[]): MenuNode | undefined {
  for (const n of nodes) {
    if (n.hidden) continue;
    if (n.type === 'menu' && n.path) return n;
    const inner = firstPage(n.children);
    if (inner) return inner;
  }
  return undefined;
}

/** getUserRoutes: the tree, and `home` = the route key of the first page. */
export function soybeanUserRoutes(info: LoginUserInformation): SoybeanUserRoute {
  const home = firstPage(info.menus);
  return { routes: info.menus.map((n) => toRoute(n, true)), home: home ? routeKey(home.path ?? '/') : 'home' };
}
