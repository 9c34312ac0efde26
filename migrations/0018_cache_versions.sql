-- Versions of what a process or Worker isolate may cache (src/db/versions.ts): each row counts the
-- changes to what its cache is derived from, bumped by triggers in the writing statement's own
-- transaction (a D1 batch included), so no write can forget it. A request reads the version in
-- the same batch as its auth statement and uses its cache only when the version still matches:
-- a change applies on the very next request, on every process and isolate.
CREATE TABLE cache_versions (
  name TEXT    PRIMARY KEY,
  n    INTEGER NOT NULL
) WITHOUT ROWID;

-- 'menus': the menu tree and what getLoginUserInformation derives from it per user (the codes and
-- the routes a user's enabled roles grant). Menus, grants of menus to roles, of roles to users,
-- and roles (status, code, deletion) change it.
INSERT INTO cache_versions (name, n) VALUES ('menus', 1);
CREATE TRIGGER menus_version_insert AFTER INSERT ON menus BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER menus_version_update AFTER UPDATE ON menus BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER menus_version_delete AFTER DELETE ON menus BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER role_menu_version_insert AFTER INSERT ON role_menu BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER role_menu_version_delete AFTER DELETE ON role_menu BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER user_role_version_insert AFTER INSERT ON user_role BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER user_role_version_delete AFTER DELETE ON user_role BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER roles_version_update AFTER UPDATE OF status, code ON roles BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
CREATE TRIGGER roles_version_delete AFTER DELETE ON roles BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;
