-- Where each resumable maintenance sweep stopped, so that a run does a bounded amount of work and the
-- next one continues (e.g. the last blob key the orphan sweep compared with the blobs table; '' =
-- start over). Written only by the scheduled cleanup.
CREATE TABLE maintenance_cursors (
  name       TEXT PRIMARY KEY,
  position   TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
