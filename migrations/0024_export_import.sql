-- Export and import (issue 27, item 6; docs/export-import.md): one `…:export` button per list page,
-- and the users page's import. No tables: an export reads the page's rows in keyset chunks, an
-- import writes through the users table's own rules. Each button under its page, found by the
-- page's path (ids are not fixed); no role is granted them (super admins pass every check).
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort) VALUES
  ((SELECT id FROM menus WHERE path = '/user/list' AND type = 'menu'), 'Users: export', 'button', NULL, NULL, NULL, 'sys:user:export', 90),
  ((SELECT id FROM menus WHERE path = '/user/list' AND type = 'menu'), 'Users: import', 'button', NULL, NULL, NULL, 'sys:user:import', 91),
  ((SELECT id FROM menus WHERE path = '/permission/role' AND type = 'menu'), 'Roles: export', 'button', NULL, NULL, NULL, 'sys:role:export', 90),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: export', 'button', NULL, NULL, NULL, 'sys:post:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: export', 'button', NULL, NULL, NULL, 'sys:dictType:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: export', 'button', NULL, NULL, NULL, 'sys:dictData:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: export', 'button', NULL, NULL, NULL, 'sys:config:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: export', 'button', NULL, NULL, NULL, 'sys:notice:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/loginLog' AND type = 'menu'), 'Login log: export', 'button', NULL, NULL, NULL, 'sys:loginLog:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/opLog' AND type = 'menu'), 'Operation log: export', 'button', NULL, NULL, NULL, 'sys:opLog:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/online' AND type = 'menu'), 'Online users: export', 'button', NULL, NULL, NULL, 'sys:online:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/job' AND type = 'menu'), 'Jobs: export', 'button', NULL, NULL, NULL, 'sys:job:export', 90),
  ((SELECT id FROM menus WHERE path = '/system/jobLog' AND type = 'menu'), 'Job log: export', 'button', NULL, NULL, NULL, 'sys:jobLog:export', 90);
