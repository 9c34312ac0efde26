-- Files and images: the contentType "part of" filter. A `LIKE '%…%'` cannot seek an index, but a
-- kind holds few distinct content types: the page walks them over this index (one seek each,
-- a recursive query), matches the pattern against those few values, then reads the matching
-- records by equality here. Before, every file record was read and tested (~22 ms over 100k).
-- An index only: nothing derived to keep in sync, back up or replay into D1.
CREATE INDEX files_kind_content_type ON files (kind, content_type, created_at);
