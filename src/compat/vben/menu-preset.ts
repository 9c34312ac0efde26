import { sql, type CompiledQuery } from 'kysely';
import type { DbPorts } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { addDirectory, addPage, applyPresetStatements, named, pageOf, placePage, presetSqlText, SYSTEM_DIR } from '../menu-preset.ts';

/**
 * The vben menu preset (MENU_PRESET=vben at the first start, or `bun scripts/menu-preset.ts vben`
 * on an existing database; docs/vben.md): our seeded menus shaped for the views vue-vben-admin 5
 * ships, so its backend access mode (`menu/all`) resolves every route:
 *
 * - Dashboard (`/dashboard`): Analytics `/dashboard/analytics/index`, Workspace
 *   `/dashboard/workspace/index` (web-antd's views, in every vben app); new pages without buttons,
 *   shown to a super admin and to the roles granted them;
 * - System (`/system`): Users `/system/user/list`, Roles `/system/role/list`, Menus
 *   `/system/menu/list`, Departments `/system/dept/list` (the playground's system views) — our
 *   seeded pages, found by the buttons they hold;
 * - Profile (`/profile`, `/_core/profile/index`, hidden): vben's own profile route, which its
 *   backend mode otherwise drops (the header's menu links to it).
 *
 * Route names and Iconify icons are vben's own for these views (`SystemUser`, `mdi:user`, …), so
 * vben's mixed access mode merges them with its front-end routes by name. Every button, and so
 * every grant, stays where it was. Our pages vben has no view for (posts, dictionaries, parameters,
 * notices, logs, online users, jobs, files, images, backups, API keys, monitors) are hidden, not
 * deleted: their component becomes vben's `/_core/fallback/coming-soon` (so even a hidden route
 * resolves), and a `Menu<id>` route name becomes a meaningful one. Directories left with no
 * visible page are hidden. Running it again changes nothing.
 */

/** The views vben ships that the preset names (paths as `menu/all` gives them). */
export const VBEN_VIEWS = {
  analytics: '/dashboard/analytics/index',
  workspace: '/dashboard/workspace/index',
  user: '/system/user/list',
  role: '/system/role/list',
  menu: '/system/menu/list',
  dept: '/system/dept/list',
  profile: '/_core/profile/index',
  comingSoon: '/_core/fallback/coming-soon',
} as const;

/** Our pages vben has no view for: the button that finds each, and a route name for a `Menu<id>` one. */
const WITHOUT_VIEW: readonly (readonly [code: string, name: string])[] = [
  ['sys:post:page', 'SystemPost'],
  ['sys:dictType:page', 'SystemDict'],
  ['sys:dictData:page', 'SystemDictData'],
  ['sys:config:page', 'SystemConfig'],
  ['sys:notice:page', 'SystemNotice'],
  ['sys:loginLog:page', 'SystemLoginLog'],
  ['sys:opLog:page', 'SystemOperationLog'],
  ['sys:online:page', 'SystemOnline'],
  ['sys:job:page', 'SystemJob'],
  ['sys:jobLog:page', 'SystemJobLog'],
  ['sys:file:page', 'SystemFile'],
  ['sys:image:page', 'SystemImage'],
  ['sys:backup:page', 'SystemBackup'],
  ['sys:apiKey:page', 'SystemApiKey'],
  ['sys:monitor:server', 'SystemServer'],
  ['sys:monitor:cache', 'SystemCache'],
];

/** Hidden, its view vben's "coming soon" page; a `Menu<id>` name replaced when `name` is free. */
function hideWithoutView(code: string, name: string): CompiledQuery {
  const page = pageOf(code);
  const newName = sql`CASE WHEN name GLOB 'Menu[0-9]*' AND NOT EXISTS (SELECT 1 FROM menus o WHERE o.name = ${name} COLLATE NOCASE) THEN ${name} ELSE name END`;
  return sql`UPDATE menus SET hidden = 1, component = ${VBEN_VIEWS.comingSoon}, name = ${newName}, version = version + 1
    WHERE id = ${page} AND (hidden <> 1 OR component IS NOT ${VBEN_VIEWS.comingSoon} OR name IS NOT ${newName})`.compile(qb);
}

/**
 * A directory with pages, none of them visible, or one of 0001's the pages left ("User management",
 * "Permission management"); inner ones first: run twice for two levels.
 */
const hideEmptiedDirectories = () =>
  sql`UPDATE menus SET hidden = 1, version = version + 1 WHERE type = 'directory' AND hidden = 0
    AND (EXISTS (SELECT 1 FROM menus c WHERE c.parent_id = menus.id AND c.type <> 'button') OR (path IN ('/user', '/permission') AND parent_id = 0))
    AND NOT EXISTS (SELECT 1 FROM menus c WHERE c.parent_id = menus.id AND c.type <> 'button' AND c.hidden = 0)`.compile(qb);

export function vbenMenuPresetStatements(): CompiledQuery[] {
  const dashboard = named('Dashboard');
  return [
    addDirectory(sql`0`, 'Dashboard', '/dashboard', 'lucide:layout-dashboard', 'Dashboard', 0),
    addPage(dashboard, 'Analytics', '/dashboard/analytics', VBEN_VIEWS.analytics, 'lucide:area-chart', 'Analytics', 1),
    addPage(dashboard, 'Workspace', '/dashboard/workspace', VBEN_VIEWS.workspace, 'carbon:workspace', 'Workspace', 2),
    sql`UPDATE menus SET title = 'System', icon = 'ion:settings-outline', name = 'System', sort = 1, hidden = 0, version = version + 1
      WHERE id = ${SYSTEM_DIR} AND (title <> 'System' OR icon IS NOT 'ion:settings-outline' OR name IS NOT 'System' OR sort <> 1 OR hidden <> 0)`.compile(qb),
    placePage({ code: 'sys:user:page', parent: SYSTEM_DIR, title: 'Users', path: '/system/user', component: VBEN_VIEWS.user, icon: 'mdi:user', name: 'SystemUser', sort: 1 }),
    placePage({ code: 'sys:role:page', parent: SYSTEM_DIR, title: 'Roles', path: '/system/role', component: VBEN_VIEWS.role, icon: 'mdi:account-group', name: 'SystemRole', sort: 2 }),
    placePage({ code: 'sys:menu:tree', parent: SYSTEM_DIR, title: 'Menus', path: '/system/menu', component: VBEN_VIEWS.menu, icon: 'mdi:menu', name: 'SystemMenu', sort: 3 }),
    placePage({ code: 'sys:org:tree', parent: SYSTEM_DIR, title: 'Departments', path: '/system/dept', component: VBEN_VIEWS.dept, icon: 'charm:organisation', name: 'SystemDept', sort: 4 }),
    addPage(sql`0`, 'Profile', '/profile', VBEN_VIEWS.profile, 'lucide:user', 'Profile', 99, true),
    ...WITHOUT_VIEW.map(([code, name]) => hideWithoutView(code, name)),
    hideEmptiedDirectories(),
    hideEmptiedDirectories(),
  ];
}

/** Applies the preset in one atomic batch (a transaction on Bun, a D1 batch on Workers). */
export async function applyVbenMenuPreset(deps: DbPorts): Promise<void> {
  await applyPresetStatements(deps, vbenMenuPresetStatements());
}

/** The preset as SQL text, for `wrangler d1 execute --file` on a D1 database. */
export function vbenMenuPresetSql(): string {
  return presetSqlText(vbenMenuPresetStatements());
}
