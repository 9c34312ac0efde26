-- sysBackup: one row per backup archive (the archives themselves live in BACKUP_DIR). At most one
-- backup runs at a time (the partial unique index), so two clicks cannot start two snapshots.
CREATE TABLE backups (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  name         TEXT    NOT NULL UNIQUE,
  size         INTEGER NOT NULL DEFAULT 0,
  sha256       TEXT    NOT NULL DEFAULT '',
  status       TEXT    NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  trigger_type TEXT    NOT NULL CHECK (trigger_type IN ('manual', 'scheduled')),
  created_by   INTEGER,
  created_at   TEXT    NOT NULL,
  finished_at  TEXT,
  error_msg    TEXT
);
CREATE INDEX backups_created_at ON backups (created_at);
CREATE UNIQUE INDEX backups_one_running ON backups (status) WHERE status = 'running';

-- The page and its buttons under "System management". No role is granted them: only the super
-- admin (who passes every check) may back up or download the whole database by default.
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
VALUES (29, 'Backups', 'menu', '/system/backup', 'system/BackupList', NULL, NULL, 9);
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT m.id, b.title, 'button', NULL, NULL, NULL, b.permission, b.sort
FROM menus m,
  (SELECT 'Backups: page' AS title, 'sys:backup:page' AS permission, 1 AS sort
   UNION ALL SELECT 'Backups: create', 'sys:backup:create', 2
   UNION ALL SELECT 'Backups: download', 'sys:backup:download', 3
   UNION ALL SELECT 'Backups: delete', 'sys:backup:delete', 4) b
WHERE m.path = '/system/backup' AND m.type = 'menu';
