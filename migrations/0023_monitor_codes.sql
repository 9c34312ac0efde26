-- Codes for the two monitor pages of the RuoYi dialect (issue 28, docs/ruoyi.md): the server
-- page (this process's own figures) and the cache pages (the cache_versions counters). Each is a
-- hidden page under "System management" (only the dialect serves them; the RuoYi menu preset
-- shows them in its 系统监控) with its one button.
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, hidden, name)
SELECT m.id, p.title, 'menu', p.path, p.component, NULL, NULL, p.sort, 1, p.name
FROM menus m, (
  SELECT 'Server monitor' AS title, '/system/server' AS path, 'system/ServerMonitor' AS component, 20 AS sort, 'ServerMonitor' AS name
  UNION ALL SELECT 'Cache monitor', '/system/cache', 'system/CacheMonitor', 21, 'CacheMonitor'
) p
WHERE m.path = '/system' AND m.type = 'directory' AND m.parent_id = 0;

INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT m.id, b.title, 'button', NULL, NULL, NULL, b.code, 1
FROM menus m, (
  SELECT 'Server monitor: view' AS title, 'sys:monitor:server' AS code, '/system/server' AS page
  UNION ALL SELECT 'Cache monitor: view', 'sys:monitor:cache', '/system/cache'
) b
WHERE m.path = b.page AND m.type = 'menu';
