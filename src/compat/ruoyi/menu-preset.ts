import { sql, type CompiledQuery } from 'kysely';
import type { DbPorts } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { addDirectory, addPage, applyPresetStatements, hidePages, named, placePage, presetSqlText, SYSTEM_DIR } from '../menu-preset.ts';

/**
 * The RuoYi menu preset (MENU_PRESET=ruoyi at the first start, or `bun scripts/menu-preset.ts`
 * on an existing database; docs/ruoyi.md): our seeded pages re-shaped into RuoYi's sidebar —
 * 系统管理 (用户, 角色, 菜单, 部门, 岗位, 字典, 参数, 通知公告, 日志管理 › 操作日志, 登录日志) and
 * 系统监控 (在线用户, 定时任务, 服务监控, 缓存监控, 缓存列表) — with RuoYi's view components, route
 * names (= the views' component names, for keep-alive) and icons. Pages are found by the buttons
 * they hold (ids differ between databases); every button, and so every grant to a role, stays
 * where it was. Our own pages that RuoYi has no view for (files, images, backups, API keys) or that RuoYi
 * routes by itself (dictionary items, job log: opened from their lists) and the emptied
 * directories are hidden, not deleted. Running it again changes nothing more.
 */

export function ruoyiMenuPresetStatements(): CompiledQuery[] {
  const log = named('Log');
  const monitor = named('Monitor');
  return [
    sql`UPDATE menus SET title = '系统管理', icon = 'system', name = 'System', sort = 1, hidden = 0, version = version + 1 WHERE id = ${SYSTEM_DIR}`.compile(qb),
    placePage({ code: 'sys:user:page', parent: SYSTEM_DIR, title: '用户管理', path: 'user', component: 'system/user/index', icon: 'user', name: 'User', sort: 1 }),
    placePage({ code: 'sys:role:page', parent: SYSTEM_DIR, title: '角色管理', path: 'role', component: 'system/role/index', icon: 'peoples', name: 'Role', sort: 2 }),
    placePage({ code: 'sys:menu:tree', parent: SYSTEM_DIR, title: '菜单管理', path: 'menu', component: 'system/menu/index', icon: 'tree-table', name: 'Menu', sort: 3 }),
    placePage({ code: 'sys:org:tree', parent: SYSTEM_DIR, title: '部门管理', path: 'dept', component: 'system/dept/index', icon: 'tree', name: 'Dept', sort: 4 }),
    placePage({ code: 'sys:post:page', parent: SYSTEM_DIR, title: '岗位管理', path: 'post', component: 'system/post/index', icon: 'post', name: 'Post', sort: 5 }),
    placePage({ code: 'sys:dictType:page', parent: SYSTEM_DIR, title: '字典管理', path: 'dict', component: 'system/dict/index', icon: 'dict', name: 'Dict', sort: 6 }),
    placePage({ code: 'sys:config:page', parent: SYSTEM_DIR, title: '参数设置', path: 'config', component: 'system/config/index', icon: 'edit', name: 'Config', sort: 7 }),
    placePage({ code: 'sys:notice:page', parent: SYSTEM_DIR, title: '通知公告', path: 'notice', component: 'system/notice/index', icon: 'message', name: 'Notice', sort: 8 }),
    addDirectory(SYSTEM_DIR, '日志管理', 'log', 'log', 'Log', 9),
    placePage({ code: 'sys:opLog:page', parent: log, title: '操作日志', path: 'operlog', component: 'monitor/operlog/index', icon: 'form', name: 'Operlog', sort: 1 }),
    placePage({ code: 'sys:loginLog:page', parent: log, title: '登录日志', path: 'logininfor', component: 'monitor/logininfor/index', icon: 'logininfor', name: 'Logininfor', sort: 2 }),
    addDirectory(sql`0`, '系统监控', '/monitor', 'monitor', 'Monitor', 2),
    placePage({ code: 'sys:online:page', parent: monitor, title: '在线用户', path: 'online', component: 'monitor/online/index', icon: 'online', name: 'Online', sort: 1 }),
    placePage({ code: 'sys:job:page', parent: monitor, title: '定时任务', path: 'job', component: 'monitor/job/index', icon: 'job', name: 'Job', sort: 2 }),
    placePage({ code: 'sys:monitor:server', parent: monitor, title: '服务监控', path: 'server', component: 'monitor/server/index', icon: 'server', name: 'Server', sort: 4 }),
    placePage({ code: 'sys:monitor:cache', parent: monitor, title: '缓存监控', path: 'cache', component: 'monitor/cache/index', icon: 'redis', name: 'Cache', sort: 5 }),
    // 缓存列表 has no button of its own: a page beside 缓存监控, shown to whoever is granted it.
    addPage(monitor, '缓存列表', 'cacheList', 'monitor/cache/list', 'redis-list', 'CacheList', 6),
    // No RuoYi view for these: out of the sidebar (their codes and grants stay).
    // RuoYi routes the items and job-log pages itself (/system/dict-data/index/:dictId,
    // /monitor/job-log/index/:jobId), opened from their lists; it has no API-key page.
    ...hidePages(['sys:file:page', 'sys:image:page', 'sys:backup:page', 'sys:dictData:page', 'sys:jobLog:page', 'sys:apiKey:page']),
    // The directories the pages left (0001's "User management" and "Permission management").
    sql`UPDATE menus SET hidden = 1 WHERE type = 'directory' AND path IN ('/user', '/permission') AND parent_id = 0
      AND NOT EXISTS (SELECT 1 FROM menus c WHERE c.parent_id = menus.id AND c.hidden = 0)`.compile(qb),
  ];
}

/** Applies the preset in one atomic batch (a transaction on Bun, a D1 batch on Workers). */
export async function applyRuoyiMenuPreset(deps: DbPorts): Promise<void> {
  await applyPresetStatements(deps, ruoyiMenuPresetStatements());
}

/** The preset as SQL text, for `wrangler d1 execute --file` on a D1 database. */
export function ruoyiMenuPresetSql(): string {
  return presetSqlText(ruoyiMenuPresetStatements());
}
