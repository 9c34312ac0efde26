-- File ids must never be reused: a signed link names a file by id, so with plain INTEGER PRIMARY
-- KEY deleting the newest file and uploading another handed the old, still valid link the new
-- content. AUTOINCREMENT never gives an id out twice. SQLite cannot add it in place, so the table
-- is rebuilt (nothing references files, so dropping the old table cascades nowhere).
CREATE TABLE files_v2 (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO files_v2 (id, kind, name, extension, content_type, size, sha256, width, height, created_by, created_at)
  SELECT id, kind, name, extension, content_type, size, sha256, width, height, created_by, created_at FROM files;
DROP TABLE files;
ALTER TABLE files_v2 RENAME TO files;
CREATE INDEX files_kind_created_at ON files (kind, created_at);
CREATE INDEX files_kind_name ON files (kind, name);
CREATE INDEX files_sha256 ON files (sha256);
