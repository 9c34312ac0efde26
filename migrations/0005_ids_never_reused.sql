-- User, role and menu ids must never be reused: with plain INTEGER PRIMARY KEY, deleting the
-- newest user and adding another handed the new one the deleted user's login log, operation log
-- and file history (and a stale client's grants). AUTOINCREMENT never gives an id out twice.
-- SQLite cannot add it in place, so the three tables are rebuilt with the columns they have as
-- of 0001-0004.
--
-- Foreign keys stay on (D1 cannot turn them off): dropping a parent table runs an implicit
-- DELETE that fires ON DELETE CASCADE, so the grants and sessions are copied aside and emptied
-- first, and put back after the rename. defer_foreign_keys lets the steps in between be momentarily
-- inconsistent; everything is consistent again at the end of the migration.
PRAGMA defer_foreign_keys = true;

-- This rebuild knows the columns of 0001-0004 only. A database that already applied a later
-- migration (0006 adds columns and a child table of roles) must not run it: fail with a named
-- constraint instead of losing data. (Restore from before, or re-create the database.)
CREATE TABLE migration_0005_guard (ok INTEGER, CONSTRAINT apply_0005_before_later_migrations CHECK (ok = 1));
INSERT INTO migration_0005_guard (ok) SELECT CASE WHEN EXISTS (SELECT 1 FROM d1_migrations WHERE name > '0005') THEN 0 ELSE 1 END;
DROP TABLE migration_0005_guard;

CREATE TABLE keep_user_role AS SELECT user_id, role_id FROM user_role;
CREATE TABLE keep_role_menu AS SELECT role_id, menu_id FROM role_menu;
CREATE TABLE keep_sessions AS SELECT id, user_id, ip, user_agent, browser, os, login_at, expires_at, revoked_at FROM sessions;
-- Emptied here so the drops below have nothing to cascade into (a cascade from roles into
-- user_role would also have to look at the already dropped users table).
DELETE FROM user_role;
DELETE FROM role_menu;
DELETE FROM sessions;

CREATE TABLE users_v2 (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO users_v2 (id, login_name, password_hash, nick_name, email, phone, avatar, status, remark, last_login_at, last_login_ip, version, created_at, updated_at)
  SELECT id, login_name, password_hash, nick_name, email, phone, avatar, status, remark, last_login_at, last_login_ip, version, created_at, updated_at FROM users;

CREATE TABLE roles_v2 (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL,
  code       TEXT    NOT NULL,
  sort       INTEGER NOT NULL DEFAULT 0,
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
INSERT INTO roles_v2 (id, name, code, sort, status, remark, version, created_at, updated_at)
  SELECT id, name, code, sort, status, remark, version, created_at, updated_at FROM roles;

CREATE TABLE menus_v2 (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO menus_v2 (id, parent_id, title, type, path, component, icon, permission, sort, hidden, status, version, created_at, updated_at)
  SELECT id, parent_id, title, type, path, component, icon, permission, sort, hidden, status, version, created_at, updated_at FROM menus;

-- Each drop is followed by its rename, so the foreign-key code compiled for the next drop finds
-- every table user_role, role_menu and sessions reference.
DROP TABLE users;
ALTER TABLE users_v2 RENAME TO users;
DROP TABLE roles;
ALTER TABLE roles_v2 RENAME TO roles;
DROP TABLE menus;
ALTER TABLE menus_v2 RENAME TO menus;

CREATE UNIQUE INDEX users_login_name ON users (login_name COLLATE NOCASE);
CREATE INDEX users_created_at ON users (created_at);
CREATE INDEX users_status_created_at ON users (status, created_at);
CREATE INDEX users_phone ON users (phone);
CREATE UNIQUE INDEX roles_code ON roles (code COLLATE NOCASE);
CREATE INDEX roles_created_at ON roles (created_at);
CREATE INDEX menus_parent_id ON menus (parent_id, sort);
CREATE INDEX menus_permission ON menus (permission);

INSERT INTO user_role (user_id, role_id) SELECT user_id, role_id FROM keep_user_role;
INSERT INTO role_menu (role_id, menu_id) SELECT role_id, menu_id FROM keep_role_menu;
INSERT INTO sessions (id, user_id, ip, user_agent, browser, os, login_at, expires_at, revoked_at)
  SELECT id, user_id, ip, user_agent, browser, os, login_at, expires_at, revoked_at FROM keep_sessions;
DROP TABLE keep_user_role;
DROP TABLE keep_role_menu;
DROP TABLE keep_sessions;

-- Ids already handed out before this migration and deleted since live on in the logs and file
-- records: start the user sequence above every id those still name. (A placeholder row at that
-- id sets the AUTOINCREMENT high-water mark without writing sqlite_sequence directly.)
INSERT INTO users (id, login_name, password_hash, created_at, updated_at)
  SELECT m, '~id-floor~', '!', '', '' FROM (
    SELECT max(coalesce((SELECT max(user_id) FROM login_log), 0), coalesce((SELECT max(operator_id) FROM op_log), 0),
               coalesce((SELECT max(created_by) FROM files), 0)) AS m)
  WHERE m > coalesce((SELECT max(id) FROM users), 0);
DELETE FROM users WHERE login_name = '~id-floor~';
