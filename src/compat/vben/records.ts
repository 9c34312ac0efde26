import type { MenuNode } from '../../modules/menus/index.ts';
import type { OrgNode } from '../../modules/orgs/index.ts';
import { iconifyName } from './menu-routes.ts';

/** Our records as vben's system views read them: string ids, status 1/0, `createTime`. */
const status = (s: string) => (s === 'enabled' ? 1 : 0);

export function toVbenUser(u: { id: number; loginName: string; nickName: string; status: string; orgId: number | null; remark: string | null; createdAt: string; version: number }) {
  return { id: String(u.id), name: u.loginName, realName: u.nickName, status: status(u.status), deptId: u.orgId === null ? '' : String(u.orgId), remark: u.remark ?? '', createTime: u.createdAt, version: u.version };
}

/** `permissions` is vben's list of the role's granted menu ids (read with the page, as strings). */
export function toVbenRole(r: { id: number; name: string; code: string; status: string; remark: string | null; createdAt: string; version: number; menuIds?: number[] }) {
  return { id: String(r.id), name: r.name, code: r.code, status: status(r.status), remark: r.remark ?? '', createTime: r.createdAt, permissions: (r.menuIds ?? []).map(String), version: r.version };
}

const MENU_TYPE = { directory: 'catalog', menu: 'menu', button: 'button' } as const;

export type VbenMenu = ReturnType<typeof toVbenMenu>;
export function toVbenMenu(m: MenuNode): {
  id: string; pid: string; name: string; status: number; type: string; path: string; component?: string; authCode?: string;
  meta: { title: string; icon?: string; order: number; hideInMenu: boolean; keepAlive: boolean }; children?: VbenMenu[];
} {
  const icon = iconifyName(m.icon);
  return {
    id: String(m.id),
    pid: String(m.parentId),
    name: m.name ?? `Menu${m.id}`,
    status: status(m.status),
    type: MENU_TYPE[m.type],
    path: m.path ?? '',
    ...(m.component ? { component: m.component } : {}),
    ...(m.permission ? { authCode: m.permission } : {}),
    meta: { title: m.title, ...(icon ? { icon } : {}), order: m.sort, hideInMenu: m.hidden, keepAlive: m.keepAlive },
    ...(m.children.length ? { children: m.children.map(toVbenMenu) } : {}),
  };
}

export type VbenDept = { id: string; pid: string; name: string; status: number; remark: string; createTime: string; version: number; children?: VbenDept[] };
export function toVbenDept(o: OrgNode): VbenDept {
  return {
    id: String(o.id),
    pid: String(o.parentId),
    name: o.name,
    status: status(o.status),
    remark: o.remark ?? '',
    createTime: o.createdAt,
    version: o.version,
    ...(o.children.length ? { children: o.children.map(toVbenDept) } : {}),
  };
}
