import type { RouterMenu } from '../../modules/login-user/index.ts';

/** A vue-router record as vben's `generateRoutesByBackend` takes it (RouteRecordStringComponent). */
export interface VbenRoute {
  name: string;
  path: string;
  component?: string;
  meta: { title: string; icon?: string; order: number; hideInMenu?: boolean; keepAlive?: boolean };
  children?: VbenRoute[];
}

/**
 * Our seeded icons are short names from the example SPA; vben renders Iconify names (`set:name`).
 * Names that already carry a set, URLs and paths pass unchanged; the rest get Ant Design's
 * outlined set, which holds the seeded ones (user, lock, setting, …) under `<name>-outlined`.
 */
export function iconifyName(icon: string | null): string | undefined {
  if (!icon) return undefined;
  if (/[:/]/.test(icon)) return icon;
  return `ant-design:${icon.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`).replace(/^-/, '')}-outlined`;
}

/** `system/UserList` or `./views/system/user.vue` → `/system/UserList`, `/system/user`: vben's view key form. */
function viewPath(component: string): string {
  return '/' + component.replace(/^(\.{1,2}\/)+/, '').replace(/^\/+/, '').replace(/^views\//, '').replace(/\.vue$/, '');
}

const pascal = (path: string) =>
  path
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');

/**
 * Our route tree (getLoginUserInformation's `menus`) as vben route records: top-level directories
 * render in `BasicLayout`, paths become absolute (vben wants absolute top-level paths), and a menu
 * without a name of its own is named after its path (`/system/user` → `SystemUser`), which stays
 * the same across installs, unlike `Menu<id>`. A clash falls back to `Menu<id>` (unique by id).
 */
export function toVbenRoutes(menus: RouterMenu[]): VbenRoute[] {
  const names = new Set<string>();
  const walk = (items: RouterMenu[], parentPath: string, top: boolean): VbenRoute[] =>
    items.map((m) => {
      const own = m.path ?? `m${m.id}`;
      const path = own.startsWith('/') ? own : `${parentPath.replace(/\/$/, '')}/${own}`;
      let name = /^Menu\d+$/.test(m.name) ? pascal(path) || m.name : m.name;
      if (names.has(name)) name = `Menu${m.id}`;
      names.add(name);
      const icon = iconifyName(m.icon);
      const route: VbenRoute = {
        name,
        path,
        meta: { title: m.title, order: m.sort, ...(icon ? { icon } : {}), ...(m.hidden ? { hideInMenu: true } : {}), ...(m.keepAlive ? { keepAlive: true } : {}) },
      };
      if (m.type === 'directory') {
        if (top) route.component = 'BasicLayout';
      } else if (m.component) {
        route.component = viewPath(m.component);
      }
      if (m.children.length) route.children = walk(m.children, path, false);
      return route;
    });
  return walk(menus, '', true);
}

/**
 * Where vben goes after login (`userInfo.homePath`, before its `defaultHomePath`, `/dashboard`): the
 * first page the user's sidebar shows, so a user not granted the dashboard lands on a page of
 * theirs rather than on vben's 404. Undefined when nothing is shown (vben's default applies).
 */
export function homePathOf(routes: VbenRoute[]): string | undefined {
  for (const r of routes) {
    if (r.meta.hideInMenu) continue;
    if (r.children?.length) {
      const inner = homePathOf(r.children);
      if (inner) return inner;
    } else if (r.component && r.component !== 'BasicLayout') {
      return r.path;
    }
  }
  return undefined;
}
