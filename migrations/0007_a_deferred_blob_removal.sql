-- File content is no longer removed when its last record goes: the blob row stays at ref_count 0
-- with the time it lost its last reference, and the periodic sweep removes row and content only
-- once that is older than BLOB_GRACE_HOURS. So a backup that snapshots the database and then
-- copies the blobs it references never finds one missing, and an upload of identical content
-- racing the delete simply revives the row.
ALTER TABLE blobs ADD COLUMN unreferenced_at TEXT;
UPDATE blobs SET unreferenced_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE ref_count = 0;
DROP INDEX IF EXISTS blobs_ref_count;
CREATE INDEX blobs_unreferenced_at ON blobs (unreferenced_at) WHERE ref_count = 0;
