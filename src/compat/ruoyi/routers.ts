import type { RouterMenu } from '../../modules/login-user/index.ts';

/** One route of RuoYi's getRouters answer (its store builds vue-router routes from them). */
export interface RuoyiRoute {
  name: string;
  path: string;
  hidden: boolean;
  redirect?: string;
  component: string;
  alwaysShow?: boolean;
  query?: string;
  meta: { title: string; icon: string; noCache: boolean; link: string | null };
  children?: RuoyiRoute[];
}

/**
 * Names the client's own routes use, constant and dynamic (a menu by that name would replace
 * them: the job log page is 'JobLog' in both RuoYi and our seeds). Such a menu's route gets its id
 * appended.
 */
const RESERVED = new Set(['Index', 'Profile', 'AuthRole', 'AuthUser', 'Data', 'JobLog', 'GenEdit']);
const EXTERNAL = /^https?:\/\//i;

/**
 * Our route tree (getLoginUserInformation's `menus`: granted, enabled, ordered) → RuoYi's: a top-level
 * directory is `Layout` with an absolute path, a nested one `ParentView`; a menu's component is the
 * view path as stored (the RuoYi menu preset stores RuoYi's view paths, docs/ruoyi.md); children
 * have paths relative to their parent (RuoYi joins them). An external link stays as it is.
 */
export function ruoyiRoutes(menus: readonly RouterMenu[], depth = 0): RuoyiRoute[] {
  return menus.map((m) => {
    const top = depth === 0;
    const raw = (m.path ?? '').trim();
    const external = EXTERNAL.test(raw);
    const path = external ? raw : top ? `/${raw.replace(/^\/+/, '')}` : raw.replace(/^\/+/, '') || `m${m.id}`;
    const name = RESERVED.has(m.name) ? `${m.name}${m.id}` : m.name;
    const meta = { title: m.title, icon: m.icon || '#', noCache: !m.keepAlive, link: external ? raw : null };
    if (m.type === 'directory') {
      return {
        name,
        path,
        hidden: m.hidden,
        redirect: 'noRedirect',
        component: top ? 'Layout' : 'ParentView',
        alwaysShow: true,
        meta,
        children: ruoyiRoutes(m.children, depth + 1),
      };
    }
    const component = external ? (top ? 'Layout' : 'InnerLink') : m.component?.trim() || 'ParentView';
    const route: RuoyiRoute = { name, path, hidden: m.hidden, component, meta };
    // A page at the top level sits in the layout as its only child (RuoYi's own backend does the same).
    if (top && !external) {
      return { name: `${name}Root`, path: '/', hidden: m.hidden, component: 'Layout', meta: { ...meta, title: m.title }, children: [{ ...route, path: path.slice(1) }] };
    }
    return route;
  });
}
