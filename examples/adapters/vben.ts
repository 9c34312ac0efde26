// Adapter for vue-vben-admin (v5, "backend" access mode): our login, user information, codes and
// menu tree in the shapes its four calls expect (/auth/login, /user/info, /auth/codes, /menu/all).
// Shapes transcribed from the template's own type definitions (repository vbenjs/vue-vben-admin):
//   packages/@core/base/typings/src/vue-router.d.ts  RouteMeta, RouteRecordStringComponent
//   packages/@core/base/typings/src/basic.d.ts        BasicUserInfo
//   packages/types/src/user.ts                        UserInfo (extends BasicUserInfo)
//   apps/web-antd/src/api/core/auth.ts                AuthApi.LoginResult, getAccessCodesApi(): string[]
import { firstPage, type LoginData, type LoginUserInformation, type MenuNode } from './common.ts';

/** The RouteMeta fields we can fill (all others are optional in vben). */
export interface VbenRouteMeta {
  title: string;
  icon?: string;
  order?: number;
  hideInMenu?: boolean;
  keepAlive?: boolean;
}

/** RouteRecordStringComponent: a route whose component is a string (layout name or view path). */
export interface VbenRoute {
  name: string;
  path: string;
  component: string;
  redirect?: string;
  meta: VbenRouteMeta;
  children?: VbenRoute[];
}

export interface VbenUserInfo {
  userId: string;
  username: string;
  realName: string;
  avatar: string;
  roles?: string[];
  desc: string;
  homePath: string;
  token: string;
}

export interface VbenLoginResult {
  accessToken: string;
}

export const vbenLogin = (data: LoginData): VbenLoginResult => ({ accessToken: data.token });

/** /user/info: homePath is the first page of the menu tree. */
export function vbenUserInfo(info: LoginUserInformation, token: string): VbenUserInfo {
  return {
    userId: String(info.user.id),
    username: info.user.loginName,
    realName: info.user.nickName,
    avatar: info.user.avatar ?? '',
    roles: info.roles,
    desc: info.user.remark ?? '',
    homePath: firstPage(info.menus)?.path ?? '/',
    token,
  };
}

/** /auth/codes: the permission codes (`*` for a super admin: give it every code your UI checks, or check `*` in your access directive). */
export const vbenAccessCodes = (info: LoginUserInformation): string[] => info.permissions;

/**
 * /menu/all: directories at the root use the `BasicLayout` layout and redirect to their first
 * child; nested directories have no component; pages map `user/UserList` to the view
 * `/user/UserList` (src/views/user/UserList.vue).
 */
export function vbenMenus(nodes: MenuNode[], root = true): VbenRoute[] {
  return nodes.map((n) => {
    const meta: VbenRouteMeta = { title: n.title, order: n.sort, hideInMenu: n.hidden, keepAlive: n.keepAlive };
    if (n.icon) meta.icon = n.icon;
    const route: VbenRoute = {
      name: n.name,
      path: n.path ?? `/${n.name}`,
      component: n.type === 'directory' ? (root ? 'BasicLayout' : '') : `/${(n.component ?? n.name).replace(/^\/+/, '')}`,
      meta,
    };
    if (n.children.length) {
      route.children = vbenMenus(n.children, false);
      route.redirect = route.children[0]!.path;
    }
    return route;
  });
}
