-- Initial schema. Plain SQL that both `wrangler d1 migrations apply` and the Bun migrator run;
-- no BEGIN/COMMIT here (each runner wraps a migration itself). Times are ISO 8601 UTC text
-- ('2026-11-22T02:07:13.000Z'), which sorts and compares correctly as text.

CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  login_name    TEXT    NOT NULL,
  password_hash TEXT    NOT NULL,
  nick_name     TEXT    NOT NULL DEFAULT '',
  email         TEXT,
  phone         TEXT,
  avatar        TEXT,
  status        TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark        TEXT,
  last_login_at TEXT,
  last_login_ip TEXT,
  version       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT    NOT NULL,
  updated_at    TEXT    NOT NULL
);
-- Login names are ASCII by validation, so NOCASE gives case-insensitive uniqueness.
CREATE UNIQUE INDEX users_login_name ON users (login_name COLLATE NOCASE);
CREATE INDEX users_created_at ON users (created_at);
CREATE INDEX users_status_created_at ON users (status, created_at);
CREATE INDEX users_phone ON users (phone);

CREATE TABLE roles (
  id         INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  code       TEXT    NOT NULL,
  sort       INTEGER NOT NULL DEFAULT 0,
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE UNIQUE INDEX roles_code ON roles (code COLLATE NOCASE);
CREATE INDEX roles_created_at ON roles (created_at);

CREATE TABLE menus (
  id         INTEGER PRIMARY KEY,
  parent_id  INTEGER NOT NULL DEFAULT 0,
  title      TEXT    NOT NULL,
  type       TEXT    NOT NULL CHECK (type IN ('directory', 'menu', 'button')),
  path       TEXT,
  component  TEXT,
  icon       TEXT,
  permission TEXT,
  sort       INTEGER NOT NULL DEFAULT 0,
  hidden     INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  updated_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX menus_parent_id ON menus (parent_id, sort);
CREATE INDEX menus_permission ON menus (permission);

CREATE TABLE user_role (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, role_id)
) WITHOUT ROWID;
CREATE INDEX user_role_role_id ON user_role (role_id, user_id);

CREATE TABLE role_menu (
  role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  menu_id INTEGER NOT NULL REFERENCES menus (id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, menu_id)
) WITHOUT ROWID;
CREATE INDEX role_menu_menu_id ON role_menu (menu_id, role_id);

-- One row per login; the JWT's jti names it. Revoked or expired rows stop authenticating.
CREATE TABLE sessions (
  id         TEXT    PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  ip         TEXT    NOT NULL DEFAULT '',
  user_agent TEXT    NOT NULL DEFAULT '',
  browser    TEXT    NOT NULL DEFAULT '',
  os         TEXT    NOT NULL DEFAULT '',
  login_at   TEXT    NOT NULL,
  expires_at TEXT    NOT NULL,
  revoked_at TEXT
) WITHOUT ROWID;
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- The answer is stored as an HMAC, never in clear; a row is deleted by the attempt that uses it.
CREATE TABLE captchas (
  key         TEXT PRIMARY KEY,
  answer_hash TEXT NOT NULL,
  ip          TEXT NOT NULL DEFAULT '',
  expires_at  TEXT NOT NULL,
  created_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX captchas_expires_at ON captchas (expires_at);

-- Fixed-window counters for login throttling and captcha issuance, keyed by purpose + subject.
CREATE TABLE rate_limits (
  key          TEXT    PRIMARY KEY,
  count        INTEGER NOT NULL,
  window_start TEXT    NOT NULL,
  locked_until TEXT
) WITHOUT ROWID;

CREATE TABLE login_log (
  id         INTEGER PRIMARY KEY,
  login_name TEXT    NOT NULL,
  user_id    INTEGER,
  status     TEXT    NOT NULL CHECK (status IN ('success', 'failure')),
  msg        TEXT    NOT NULL,
  ip         TEXT    NOT NULL DEFAULT '',
  user_agent TEXT    NOT NULL DEFAULT '',
  browser    TEXT    NOT NULL DEFAULT '',
  os         TEXT    NOT NULL DEFAULT '',
  country    TEXT,
  city       TEXT,
  trace_id   TEXT    NOT NULL DEFAULT '',
  created_at TEXT    NOT NULL
);
CREATE INDEX login_log_created_at ON login_log (created_at);
CREATE INDEX login_log_login_name ON login_log (login_name COLLATE NOCASE, created_at);
CREATE INDEX login_log_ip ON login_log (ip, created_at);
CREATE INDEX login_log_status ON login_log (status, created_at);

CREATE TABLE op_log (
  id            INTEGER PRIMARY KEY,
  module        TEXT    NOT NULL,
  action        TEXT    NOT NULL,
  method        TEXT    NOT NULL,
  path          TEXT    NOT NULL,
  operator_id   INTEGER,
  operator_name TEXT,
  ip            TEXT    NOT NULL DEFAULT '',
  user_agent    TEXT    NOT NULL DEFAULT '',
  params        TEXT    NOT NULL DEFAULT '',
  status        INTEGER NOT NULL,
  error_msg     TEXT,
  duration_ms   INTEGER NOT NULL DEFAULT 0,
  trace_id      TEXT    NOT NULL DEFAULT '',
  created_at    TEXT    NOT NULL
);
CREATE INDEX op_log_created_at ON op_log (created_at);
CREATE INDEX op_log_module_action ON op_log (module, action, created_at);
CREATE INDEX op_log_operator_name ON op_log (operator_name COLLATE NOCASE, created_at);
CREATE INDEX op_log_status ON op_log (status, created_at);

-- Content-addressed storage: one blob per sha256, counted by the file records that use it.
CREATE TABLE blobs (
  sha256     TEXT    PRIMARY KEY,
  size       INTEGER NOT NULL,
  ref_count  INTEGER NOT NULL DEFAULT 0 CHECK (ref_count >= 0),
  created_at TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX blobs_ref_count ON blobs (ref_count);

CREATE TABLE files (
  id           INTEGER PRIMARY KEY,
  kind         TEXT    NOT NULL CHECK (kind IN ('file', 'image')),
  name         TEXT    NOT NULL,
  extension    TEXT    NOT NULL DEFAULT '',
  content_type TEXT    NOT NULL,
  size         INTEGER NOT NULL,
  sha256       TEXT    NOT NULL REFERENCES blobs (sha256),
  width        INTEGER,
  height       INTEGER,
  created_by   INTEGER,
  created_at   TEXT    NOT NULL
);
CREATE INDEX files_kind_created_at ON files (kind, created_at);
CREATE INDEX files_kind_name ON files (kind, name);
CREATE INDEX files_sha256 ON files (sha256);

-- Seed: the built-in super admin role (passes every check) and the full menu tree.
INSERT INTO roles (id, name, code, sort, status, remark, created_at, updated_at)
VALUES (1, 'Super administrator', 'superAdmin', 0, 'enabled', 'Built-in role; passes every permission check',
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

INSERT INTO menus (id, parent_id, title, type, path, component, icon, permission, sort) VALUES
  (1, 0, 'User management', 'directory', '/user', NULL, 'user', NULL, 1),
  (2, 1, 'Users', 'menu', '/user/list', 'user/UserList', NULL, NULL, 1),
  (3, 2, 'Users: page', 'button', NULL, NULL, NULL, 'sys:user:page', 1),
  (4, 2, 'Users: detail', 'button', NULL, NULL, NULL, 'sys:user:detail', 2),
  (5, 2, 'Users: add', 'button', NULL, NULL, NULL, 'sys:user:add', 3),
  (6, 2, 'Users: edit', 'button', NULL, NULL, NULL, 'sys:user:edit', 4),
  (7, 2, 'Users: delete', 'button', NULL, NULL, NULL, 'sys:user:delete', 5),
  (8, 2, 'Users: changeStatus', 'button', NULL, NULL, NULL, 'sys:user:changeStatus', 6),
  (9, 2, 'Users: resetPassword', 'button', NULL, NULL, NULL, 'sys:user:resetPassword', 7),
  (10, 2, 'Users: grantRole', 'button', NULL, NULL, NULL, 'sys:user:grantRole', 8),
  (11, 2, 'Users: ownRole', 'button', NULL, NULL, NULL, 'sys:user:ownRole', 9),
  (12, 0, 'Permission management', 'directory', '/permission', NULL, 'lock', NULL, 2),
  (13, 12, 'Roles', 'menu', '/permission/role', 'permission/RoleList', NULL, NULL, 1),
  (14, 13, 'Roles: page', 'button', NULL, NULL, NULL, 'sys:role:page', 1),
  (15, 13, 'Roles: list', 'button', NULL, NULL, NULL, 'sys:role:list', 2),
  (16, 13, 'Roles: detail', 'button', NULL, NULL, NULL, 'sys:role:detail', 3),
  (17, 13, 'Roles: add', 'button', NULL, NULL, NULL, 'sys:role:add', 4),
  (18, 13, 'Roles: edit', 'button', NULL, NULL, NULL, 'sys:role:edit', 5),
  (19, 13, 'Roles: delete', 'button', NULL, NULL, NULL, 'sys:role:delete', 6),
  (20, 13, 'Roles: changeStatus', 'button', NULL, NULL, NULL, 'sys:role:changeStatus', 7),
  (21, 13, 'Roles: grantMenu', 'button', NULL, NULL, NULL, 'sys:role:grantMenu', 8),
  (22, 13, 'Roles: ownMenu', 'button', NULL, NULL, NULL, 'sys:role:ownMenu', 9),
  (23, 12, 'Menus', 'menu', '/permission/menu', 'permission/MenuList', NULL, NULL, 2),
  (24, 23, 'Menus: tree', 'button', NULL, NULL, NULL, 'sys:menu:tree', 1),
  (25, 23, 'Menus: detail', 'button', NULL, NULL, NULL, 'sys:menu:detail', 2),
  (26, 23, 'Menus: add', 'button', NULL, NULL, NULL, 'sys:menu:add', 3),
  (27, 23, 'Menus: edit', 'button', NULL, NULL, NULL, 'sys:menu:edit', 4),
  (28, 23, 'Menus: delete', 'button', NULL, NULL, NULL, 'sys:menu:delete', 5),
  (29, 0, 'System management', 'directory', '/system', NULL, 'setting', NULL, 3),
  (30, 29, 'Files', 'menu', '/system/file', 'system/FileList', NULL, NULL, 1),
  (31, 30, 'Files: upload', 'button', NULL, NULL, NULL, 'sys:file:upload', 1),
  (32, 30, 'Files: page', 'button', NULL, NULL, NULL, 'sys:file:page', 2),
  (33, 30, 'Files: detail', 'button', NULL, NULL, NULL, 'sys:file:detail', 3),
  (34, 30, 'Files: delete', 'button', NULL, NULL, NULL, 'sys:file:delete', 4),
  (35, 30, 'Files: download', 'button', NULL, NULL, NULL, 'sys:file:download', 5),
  (36, 29, 'Images', 'menu', '/system/image', 'system/ImageList', NULL, NULL, 2),
  (37, 36, 'Images: upload', 'button', NULL, NULL, NULL, 'sys:image:upload', 1),
  (38, 36, 'Images: page', 'button', NULL, NULL, NULL, 'sys:image:page', 2),
  (39, 36, 'Images: detail', 'button', NULL, NULL, NULL, 'sys:image:detail', 3),
  (40, 36, 'Images: delete', 'button', NULL, NULL, NULL, 'sys:image:delete', 4),
  (41, 36, 'Images: preview', 'button', NULL, NULL, NULL, 'sys:image:preview', 5),
  (42, 29, 'Login log', 'menu', '/system/loginLog', 'system/LoginLog', NULL, NULL, 3),
  (43, 42, 'Login log: page', 'button', NULL, NULL, NULL, 'sys:loginLog:page', 1),
  (44, 42, 'Login log: delete', 'button', NULL, NULL, NULL, 'sys:loginLog:delete', 2),
  (45, 42, 'Login log: clear', 'button', NULL, NULL, NULL, 'sys:loginLog:clear', 3),
  (46, 29, 'Operation log', 'menu', '/system/opLog', 'system/OpLog', NULL, NULL, 4),
  (47, 46, 'Operation log: page', 'button', NULL, NULL, NULL, 'sys:opLog:page', 1),
  (48, 46, 'Operation log: detail', 'button', NULL, NULL, NULL, 'sys:opLog:detail', 2),
  (49, 46, 'Operation log: delete', 'button', NULL, NULL, NULL, 'sys:opLog:delete', 3),
  (50, 46, 'Operation log: clear', 'button', NULL, NULL, NULL, 'sys:opLog:clear', 4),
  (51, 29, 'Online users', 'menu', '/system/online', 'system/OnlineUser', NULL, NULL, 5),
  (52, 51, 'Online users: page', 'button', NULL, NULL, NULL, 'sys:online:page', 1),
  (53, 51, 'Online users: forceLogout', 'button', NULL, NULL, NULL, 'sys:online:forceLogout', 2);
