-- The sweep and an upload of identical content, across isolates (Workers) where no in-process
-- lock orders them. Removing content takes two database states around the store call, and an
-- upload announces itself before it writes the bytes:
--   reserved_at  set by an upload before it puts the bytes: the sweep leaves the row alone while
--                the reservation is younger than an hour (an upload's put + insert take seconds);
--   removing_at  set by the sweep when it claims an unreferenced row, before it deletes the bytes;
--                the row is deleted after them. An upload never revives a claimed row: it waits
--                until the row is gone (then its own put writes the bytes again) or gives up with 503.
-- So bytes are only deleted while their row is claimed, and no upload can reference a claimed row.
ALTER TABLE blobs ADD COLUMN reserved_at TEXT;
ALTER TABLE blobs ADD COLUMN removing_at TEXT;
