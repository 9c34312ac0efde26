-- Standard modules (issue 27), part 1: dictionaries and system parameters.
-- See docs/standard-modules.md. Both are read through per-process caches kept right by
-- cache_versions (0018): the triggers below bump 'dicts' and 'configs' in the writing statement's
-- own transaction (a D1 batch included), so a write is seen on the next request in every isolate.

-- Dictionary types: a code (what front ends ask for) and a name.
CREATE TABLE dict_types (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL,
  code       TEXT    NOT NULL UNIQUE CHECK (code <> '' AND code NOT GLOB '*[^a-z0-9_]*'),
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Items of a type, by its code (a renamed code carries its items along: ON UPDATE CASCADE). A
-- type's delete removes its items first, in the same batch; the key refuses anything else.
CREATE TABLE dict_data (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  type_code  TEXT    NOT NULL REFERENCES dict_types (code) ON UPDATE CASCADE,
  label      TEXT    NOT NULL,
  value      TEXT    NOT NULL,
  sort       INTEGER NOT NULL DEFAULT 0,
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  tag_type   TEXT    NOT NULL DEFAULT 'default' CHECK (tag_type IN ('default', 'primary', 'success', 'info', 'warning', 'danger')),
  css_class  TEXT,
  is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1)),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (type_code, value)
);
CREATE INDEX dict_data_type_sort ON dict_data (type_code, sort, id);

-- System parameters. Keys are unique case-insensitively; the built-in ones are read by the service
-- itself (login, captcha, sysUser/add) and cannot be deleted.
CREATE TABLE configs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT    NOT NULL,
  config_key   TEXT    NOT NULL COLLATE NOCASE UNIQUE,
  config_value TEXT    NOT NULL DEFAULT '',
  type         TEXT    NOT NULL DEFAULT 'custom' CHECK (type IN ('builtIn', 'custom')),
  remark       TEXT,
  version      INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Guard rules of these modules (mechanism: 0002_guard_failures.sql), in a table of their own.
CREATE TABLE dict_config_guard_failures (
  rule TEXT NOT NULL,
  -- A built-in parameter would be deleted, or its key changed.
  CONSTRAINT guard_config_builtin CHECK (rule <> 'config_builtin'),
  CONSTRAINT dict_config_guard_unknown_rule CHECK (rule IN ('config_builtin'))
);

-- The versions of the caches (db/versions.ts).
INSERT INTO cache_versions (name, n) VALUES ('dicts', 1), ('configs', 1);
CREATE TRIGGER dict_types_version_insert AFTER INSERT ON dict_types BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER dict_types_version_update AFTER UPDATE ON dict_types BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER dict_types_version_delete AFTER DELETE ON dict_types BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER dict_data_version_insert AFTER INSERT ON dict_data BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER dict_data_version_update AFTER UPDATE ON dict_data BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER dict_data_version_delete AFTER DELETE ON dict_data BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'dicts'; END;
CREATE TRIGGER configs_version_insert AFTER INSERT ON configs BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'configs'; END;
CREATE TRIGGER configs_version_update AFTER UPDATE ON configs BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'configs'; END;
CREATE TRIGGER configs_version_delete AFTER DELETE ON configs BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'configs'; END;

-- Seeded dictionaries: those the built-in fields use, with the values our API answers (a RuoYi
-- dialect maps RuoYi's '0'/'1' onto them: docs/standard-modules.md). Labels are what RuoYi users
-- expect; the remark gives the English.
INSERT INTO dict_types (name, code, remark) VALUES
  ('系统开关', 'sys_normal_disable', 'Status of users, roles, organisations, menus, posts, dictionaries: enabled / disabled'),
  ('用户性别', 'sys_user_sex', 'Sex: male / female / unknown'),
  ('系统是否', 'sys_yes_no', 'Yes / no (boolean fields as text)'),
  ('菜单状态', 'sys_show_hide', 'Menu visibility (hidden: false / true)'),
  ('通知类型', 'sys_notice_type', 'Notice type: notice / announcement'),
  ('通知状态', 'sys_notice_status', 'Notice status: draft / published / closed'),
  ('任务状态', 'sys_job_status', 'Scheduled job status: enabled / disabled'),
  ('系统状态', 'sys_common_status', 'Outcome of a login or a job run: success / failure'),
  ('参数类型', 'sys_config_type', 'System parameter type: builtIn / custom'),
  ('菜单类型', 'sys_menu_type', 'Menu type: directory / menu / button'),
  ('数据范围', 'sys_data_scope', 'Data scope of a role');

INSERT INTO dict_data (type_code, label, value, sort, tag_type, is_default, remark) VALUES
  ('sys_normal_disable', '正常', 'enabled', 1, 'primary', 1, 'Enabled'),
  ('sys_normal_disable', '停用', 'disabled', 2, 'danger', 0, 'Disabled'),
  ('sys_user_sex', '男', 'male', 1, 'default', 1, 'Male'),
  ('sys_user_sex', '女', 'female', 2, 'default', 0, 'Female'),
  ('sys_user_sex', '未知', 'unknown', 3, 'default', 0, 'Unknown'),
  ('sys_yes_no', '是', 'true', 1, 'primary', 1, 'Yes'),
  ('sys_yes_no', '否', 'false', 2, 'danger', 0, 'No'),
  ('sys_show_hide', '显示', 'false', 1, 'primary', 1, 'Shown'),
  ('sys_show_hide', '隐藏', 'true', 2, 'danger', 0, 'Hidden'),
  ('sys_notice_type', '通知', 'notice', 1, 'warning', 1, 'Notice'),
  ('sys_notice_type', '公告', 'announcement', 2, 'success', 0, 'Announcement'),
  ('sys_notice_status', '草稿', 'draft', 1, 'info', 1, 'Draft'),
  ('sys_notice_status', '正常', 'published', 2, 'primary', 0, 'Published'),
  ('sys_notice_status', '关闭', 'closed', 3, 'danger', 0, 'Closed'),
  ('sys_job_status', '正常', 'enabled', 1, 'primary', 1, 'Enabled'),
  ('sys_job_status', '暂停', 'disabled', 2, 'danger', 0, 'Paused'),
  ('sys_common_status', '成功', 'success', 1, 'primary', 0, 'Success'),
  ('sys_common_status', '失败', 'failure', 2, 'danger', 0, 'Failure'),
  ('sys_config_type', '是', 'builtIn', 1, 'primary', 0, 'Built in (cannot be deleted)'),
  ('sys_config_type', '否', 'custom', 2, 'danger', 1, 'Custom'),
  ('sys_menu_type', '目录', 'directory', 1, 'default', 0, 'Directory'),
  ('sys_menu_type', '菜单', 'menu', 2, 'default', 1, 'Menu'),
  ('sys_menu_type', '按钮', 'button', 3, 'default', 0, 'Button'),
  ('sys_data_scope', '全部数据权限', 'all', 1, 'default', 0, 'All'),
  ('sys_data_scope', '自定数据权限', 'custom', 2, 'default', 0, 'Custom organisations'),
  ('sys_data_scope', '本部门数据权限', 'org', 3, 'default', 0, 'Own organisation'),
  ('sys_data_scope', '本部门及以下数据权限', 'orgAndBelow', 4, 'default', 0, 'Own organisation and below'),
  ('sys_data_scope', '仅本人数据权限', 'self', 5, 'default', 1, 'Self only');

-- Built-in parameters, seeded empty: an empty value follows the configuration.
INSERT INTO configs (name, config_key, config_value, type, remark) VALUES
  ('账号自助-验证码开关', 'sys.account.captchaEnabled', '', 'builtIn',
   'Captcha on login: true or false; empty follows the CAPTCHA_ENABLED setting'),
  ('用户管理-账号初始密码', 'sys.user.initPassword', '', 'builtIn',
   'The password sysUser/add gives a new user when none is sent; empty: a password is required'),
  ('账号自助-是否开启用户注册功能', 'sys.account.registerUser', '', 'builtIn',
   'Self-registration: always off (the service has no registration route); empty or false');

-- The pages and their buttons under "System management"; no role is granted them (super admins
-- pass every check). The items page is hidden: it opens from a dictionary type.
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
SELECT id, 'Dictionaries', 'menu', '/system/dict', 'system/DictList', NULL, NULL, 6, 'Dictionaries' FROM menus WHERE path = '/system' AND type = 'directory';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, hidden, name)
SELECT id, 'Dictionary items', 'menu', '/system/dict/data', 'system/DictData', NULL, NULL, 7, 1, 'DictionaryItems' FROM menus WHERE path = '/system' AND type = 'directory';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
SELECT id, 'Parameters', 'menu', '/system/config', 'system/ConfigList', NULL, NULL, 8, 'Parameters' FROM menus WHERE path = '/system' AND type = 'directory';
-- Each button under its page, found by the page's path (ids are not fixed).
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort) VALUES
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: page', 'button', NULL, NULL, NULL, 'sys:dictType:page', 1),
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: detail', 'button', NULL, NULL, NULL, 'sys:dictType:detail', 2),
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: add', 'button', NULL, NULL, NULL, 'sys:dictType:add', 3),
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: edit', 'button', NULL, NULL, NULL, 'sys:dictType:edit', 4),
  ((SELECT id FROM menus WHERE path = '/system/dict' AND type = 'menu'), 'Dictionaries: delete', 'button', NULL, NULL, NULL, 'sys:dictType:delete', 5),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: page', 'button', NULL, NULL, NULL, 'sys:dictData:page', 1),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: detail', 'button', NULL, NULL, NULL, 'sys:dictData:detail', 2),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: add', 'button', NULL, NULL, NULL, 'sys:dictData:add', 3),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: edit', 'button', NULL, NULL, NULL, 'sys:dictData:edit', 4),
  ((SELECT id FROM menus WHERE path = '/system/dict/data' AND type = 'menu'), 'Dictionary items: delete', 'button', NULL, NULL, NULL, 'sys:dictData:delete', 5),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: page', 'button', NULL, NULL, NULL, 'sys:config:page', 1),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: detail', 'button', NULL, NULL, NULL, 'sys:config:detail', 2),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: add', 'button', NULL, NULL, NULL, 'sys:config:add', 3),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: edit', 'button', NULL, NULL, NULL, 'sys:config:edit', 4),
  ((SELECT id FROM menus WHERE path = '/system/config' AND type = 'menu'), 'Parameters: delete', 'button', NULL, NULL, NULL, 'sys:config:delete', 5);
