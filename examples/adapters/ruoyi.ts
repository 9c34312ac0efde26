// Adapter for RuoYi-Vue3: our login, user information, codes and menu tree in the shapes its
// stores read, plus its page convention (GET + pageNum/pageSize → {total, rows}).
// RuoYi-Vue3 is JavaScript; the shapes are transcribed from what its code reads
// (repository yangzongzhuan/RuoYi-Vue3):
//   src/store/modules/user.js        login(): res.token; getInfo(): res.user.{userId,userName,nickName,avatar}, res.roles, res.permissions
//   src/store/modules/permission.js  getRouters(): res.data = routes {name, path, hidden, redirect, component ('Layout' |
//                                    'ParentView' | view path under src/views), alwaysShow, meta {title, icon, noCache, link}, children}
//   src/utils/request.js             every body carries `code` (200 = success, 401 = log in again) and `msg`
//   src/plugins/auth.js              all permissions are '*:*:*', the super admin role is 'admin'
// Copy it with common.ts into the template; it imports nothing else (types only, so no bundler setting is needed).
import type { Envelope, LoginData, LoginUserInformation, MenuNode } from './common.ts';

export interface RuoyiBody {
  code: number;
  msg: string;
}

export interface RuoyiLogin extends RuoyiBody {
  token: string;
}

export interface RuoyiInfo extends RuoyiBody {
  user: { userId: number; userName: string; nickName: string; avatar: string; email: string; phonenumber: string };
  roles: string[];
  permissions: string[];
}

export interface RuoyiRouteMeta {
  title: string;
  icon: string;
  noCache: boolean;
  link: string | null;
}

export interface RuoyiRoute {
  name: string;
  path: string;
  hidden: boolean;
  component: string;
  redirect?: string;
  alwaysShow?: boolean;
  meta: RuoyiRouteMeta;
  children?: RuoyiRoute[];
}

export interface RuoyiPageQuery {
  pageNum?: number;
  pageSize?: number;
  [filter: string]: string | number | undefined;
}

/** Any of our envelopes as RuoYi's request.js expects it: `code` instead of `status`. */
export const ruoyiBody = <T>(e: Envelope<T>): RuoyiBody & { data: T } => ({ code: e.status, msg: e.msg, data: e.data });

export const ruoyiLogin = (data: LoginData): RuoyiLogin => ({ code: 200, msg: 'SUCCESS', token: data.token });

/** getInfo: our super admin ('*', role superAdmin) becomes RuoYi's '*:*:*' and role 'admin'. */
export function ruoyiInfo(info: LoginUserInformation): RuoyiInfo {
  const u = info.user;
  return {
    code: 200,
    msg: 'SUCCESS',
    user: { userId: u.id, userName: u.loginName, nickName: u.nickName, avatar: u.avatar ?? '', email: u.email ?? '', phonenumber: u.phone ?? '' },
    roles: info.roles.map((r) => (r === 'superAdmin' ? 'admin' : r)),
    permissions: info.permissions.map((p) => (p === '*' ? '*:*:*' : p)),
  };
}

/** `/user/list` under `/user` → `list`; paths outside their parent stay absolute. */
export function relativePath(path: string, parentPath: string | null): string {
  if (parentPath && path.startsWith(`${parentPath.replace(/\/$/, '')}/`)) return path.slice(parentPath.replace(/\/$/, '').length + 1);
  return path;
}

/** getRouters: root directories use Layout, nested ones ParentView; child paths relative to their parent. */
export function ruoyiRouters(nodes: MenuNode[], parent: MenuNode | null = null): RuoyiRoute[] {
  return nodes.map((n) => {
    const path = relativePath(n.path ?? n.name, parent?.path ?? null);
    const route: RuoyiRoute = {
      name: n.name,
      path: parent ? path : path.startsWith('/') ? path : `/${path}`,
      hidden: n.hidden,
      component: n.type === 'directory' ? (parent ? 'ParentView' : 'Layout') : (n.component ?? n.name).replace(/^\/+/, ''),
      meta: { title: n.title, icon: n.icon ?? '', noCache: !n.keepAlive, link: null },
    };
    if (n.type === 'directory') {
      route.alwaysShow = true;
      route.redirect = 'noRedirect';
    }
    if (n.children.length) route.children = ruoyiRouters(n.children, n);
    return route;
  });
}

/** RuoYi list query (`?pageNum=1&pageSize=10&userName=ad`) → our page request body. */
export function ruoyiPageRequest(query: RuoyiPageQuery, filters: Record<string, string> = {}) {
  const params: Record<string, string | number> = {};
  for (const [theirs, ours] of Object.entries(filters)) {
    const v = query[theirs];
    if (v !== undefined && v !== '') params[ours] = v;
  }
  return { pageNo: Number(query.pageNum ?? 1), pageSize: Number(query.pageSize ?? 10), params };
}

/** Our page answer → RuoYi's `{code, msg, total, rows}`. */
export function ruoyiRows<R>(e: Envelope<{ records: R[]; total: number }>): RuoyiBody & { total: number; rows: R[] } {
  return { code: e.status, msg: e.msg, total: e.data.total, rows: e.data.records };
}
