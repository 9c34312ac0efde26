-- Organisations and data scope (contract: "Organisations and data scope").
-- Columns are ADDED (ALTER TABLE), never rebuilt, so this applies on top of 0005's table rebuilds.
-- Plain SQL for both the Bun migrator and `wrangler d1 migrations apply`; no BEGIN/COMMIT.

-- One tree of organisations. AUTOINCREMENT: an id is never given out twice, so a scope list or a
-- user naming a deleted organisation can never come to mean a new one.
CREATE TABLE orgs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  parent_id  INTEGER NOT NULL DEFAULT 0,
  name       TEXT    NOT NULL,
  code       TEXT    NOT NULL,
  sort       INTEGER NOT NULL DEFAULT 0,
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE UNIQUE INDEX orgs_code ON orgs (code COLLATE NOCASE);
CREATE INDEX orgs_parent_id ON orgs (parent_id, sort);

-- Closure table: one row per (ancestor, descendant) pair, an org being its own ancestor at depth 0.
-- "X and everything below it" is one index range (ancestor_id = X), so a data scope is a plain
-- `org_id IN (SELECT descendant_id FROM org_closure WHERE ancestor_id IN …)` on indexed columns.
-- A move rewrites the pairs of the moved subtree in two statements of the same batch.
CREATE TABLE org_closure (
  ancestor_id   INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  descendant_id INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  depth         INTEGER NOT NULL,
  PRIMARY KEY (ancestor_id, descendant_id)
) WITHOUT ROWID;
CREATE INDEX org_closure_descendant ON org_closure (descendant_id, ancestor_id);

-- A user belongs to at most one organisation (NULL = none). Deleting an org that still has users
-- is refused by the service; the foreign key backs that up.
ALTER TABLE users ADD COLUMN org_id INTEGER REFERENCES orgs (id);
CREATE INDEX users_org_id_created_at ON users (org_id, created_at);

-- Data scope of a role. Least privilege for new rows ('self'); every role that exists now keeps
-- seeing everything it saw before ('all').
ALTER TABLE roles ADD COLUMN data_scope TEXT NOT NULL DEFAULT 'self'
  CHECK (data_scope IN ('all', 'orgAndBelow', 'org', 'custom', 'self'));
UPDATE roles SET data_scope = 'all';

-- The organisations of a `custom` scope (each with everything below it).
CREATE TABLE role_scope_org (
  role_id INTEGER NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
  org_id  INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  PRIMARY KEY (role_id, org_id)
) WITHOUT ROWID;
CREATE INDEX role_scope_org_org_id ON role_scope_org (org_id, role_id);

-- Rows "concerning a user" are filtered by that user: these indexes serve the scope conditions.
CREATE INDEX IF NOT EXISTS login_log_user_id ON login_log (user_id, created_at);
CREATE INDEX IF NOT EXISTS op_log_operator_id ON op_log (operator_id, created_at);
CREATE INDEX IF NOT EXISTS files_created_by ON files (created_by, kind, created_at);

-- Guard rules of access control, checked inside atomic writes (mechanism: 0002_guard_failures.sql).
-- A table of their own, so this migration and the ones that recreate guard_failures never collide.
CREATE TABLE access_guard_failures (
  rule TEXT NOT NULL,
  -- The caller would act on a user or role holding a code (or a data scope) the caller lacks.
  CONSTRAINT guard_outside_authority CHECK (rule <> 'outside_authority'),
  -- The record named is outside the caller's data scope (answered as "not found").
  CONSTRAINT guard_out_of_scope CHECK (rule <> 'out_of_scope'),
  -- An organisation would become its own ancestor.
  CONSTRAINT guard_org_cycle CHECK (rule <> 'org_cycle'),
  -- An organisation to delete still has children or users.
  CONSTRAINT guard_org_in_use CHECK (rule <> 'org_in_use'),
  CONSTRAINT access_guard_unknown_rule CHECK (rule IN ('outside_authority', 'out_of_scope', 'org_cycle', 'org_in_use'))
);

-- Menu and buttons: organisations under "User management", grantDataScope under "Roles".
-- Ids are not fixed (other migrations seed menus too); parents are found by their path.
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT id, 'Organisations', 'menu', '/user/org', 'user/OrgList', NULL, NULL, 2 FROM menus WHERE path = '/user' AND type = 'directory';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT m.id, b.title, 'button', NULL, NULL, NULL, b.code, b.sort
FROM menus m, (
  SELECT 'Organisations: tree' AS title, 'sys:org:tree' AS code, 1 AS sort
  UNION ALL SELECT 'Organisations: detail', 'sys:org:detail', 2
  UNION ALL SELECT 'Organisations: add', 'sys:org:add', 3
  UNION ALL SELECT 'Organisations: edit', 'sys:org:edit', 4
  UNION ALL SELECT 'Organisations: delete', 'sys:org:delete', 5
) b
WHERE m.path = '/user/org' AND m.type = 'menu';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT id, 'Roles: grantDataScope', 'button', NULL, NULL, NULL, 'sys:role:grantDataScope', 10
FROM menus WHERE path = '/permission/role' AND type = 'menu';
