-- Exact totals of a name or address prefix in one index seek, whatever the log holds.
--
-- 0011 counted rows per distinct login/operator name, so the total of a prefix summed one row per
-- name in range: a prefix matching half of a million failed logins with made-up names read half a
-- million keys (23 ms). The address prefix counted over the log's own index, and with a status or a
-- date range it counted the usual way (a million-row walk: 105 ms for "10." and a status).
--
-- Each of login_log.login_name, login_log.ip and op_log.operator_name now has a PREFIX TREE per
-- status: a row for every distinct key (the value's first 48 characters; a filter is at most 48,
-- LIKE_MAX in src/core/pagination.ts) and for the longest start that two keys adjacent in order
-- share, each holding
--   n    the number of log rows whose key starts with `prefix`
--   own  the number of log rows whose key is `prefix`
-- The rows matching a prefix P are then `n` of the FIRST row at or after P that still starts with P
-- (src/db/log-counts.ts, countByTree): that row is the longest start common to every key starting
-- with P (two or more keys: the start shared by the first and last of them, stored as the start
-- shared by some adjacent pair; one key: the key itself), and every row between P and it would be a
-- start of it too, counting the same rows. At most two rows are created per new key and rows whose
-- n falls to 0 are removed: a tree built from the rows (or only ever added to) holds under 2 rows per
-- distinct key; after deletes, starts no adjacent pair shares any more stay while some key starts
-- with them (right, but up to 48 per live key). A row costs one update per stored start of the key
-- (the tree's depth, <= 48). Ranges end at `P || x'F5'` (src/core/pagination.ts, prefixEnd): above
-- every UTF-8 continuation of P, U+10FFFF included.
--
-- Kept by the triggers below in the log write's own statement, like the other count tables; a
-- delete of EVERY row (sysLoginLog/sysOpLog clear under scope `all`) instead sets the log's flag in
-- log_bulk_delete, deletes, empties the log's count tables and clears the flag in one atomic batch,
-- so a clear of a million rows does not update a tree a million times.
-- The trees are derived data (src/db/derived-tables.ts has their rebuild, used here too).

CREATE TABLE prefix_lengths (k INTEGER PRIMARY KEY);
INSERT INTO prefix_lengths (k) WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < 48) SELECT k FROM r;

CREATE TABLE log_bulk_delete (log TEXT PRIMARY KEY);

DROP TRIGGER login_log_counts_insert;
DROP TRIGGER login_log_counts_delete;
DROP TRIGGER login_log_counted_columns_fixed;
DROP TRIGGER op_log_counts_insert;
DROP TRIGGER op_log_counts_delete;
DROP TABLE login_log_name_counts;
DROP TABLE op_log_name_counts;

CREATE TABLE login_log_name_tree (
  status TEXT    NOT NULL,
  prefix TEXT    NOT NULL COLLATE NOCASE,
  n      INTEGER NOT NULL,
  own    INTEGER NOT NULL,
  PRIMARY KEY (status, prefix)
) WITHOUT ROWID;

CREATE TABLE login_log_ip_tree (
  status TEXT    NOT NULL,
  prefix TEXT    NOT NULL,
  n      INTEGER NOT NULL,
  own    INTEGER NOT NULL,
  PRIMARY KEY (status, prefix)
) WITHOUT ROWID;

CREATE TABLE op_log_name_tree (
  status INTEGER NOT NULL,
  prefix TEXT    NOT NULL COLLATE NOCASE,
  n      INTEGER NOT NULL,
  own    INTEGER NOT NULL,
  PRIMARY KEY (status, prefix)
) WITHOUT ROWID;

-- The rows already there: every key with its own count, the start each adjacent pair shares, and
-- each row's n as the sum of `own` over the keys starting with it.
DELETE FROM login_log_name_tree;
INSERT INTO login_log_name_tree (status, prefix, n, own)
  SELECT status, substr(login_name, 1, 48) COLLATE NOCASE, 0, count(*) FROM login_log WHERE login_name <> '' GROUP BY 1, 2;
INSERT INTO login_log_name_tree (status, prefix, n, own)
  SELECT status, p, 0, 0 FROM (
    SELECT status, substr(prefix, 1, (SELECT coalesce(max(k), 0) FROM prefix_lengths WHERE k <= min(length(prefix), length(prev)) AND substr(prefix, 1, k) = substr(prev, 1, k) COLLATE NOCASE)) AS p
    FROM (SELECT status, prefix, lag(prefix) OVER (PARTITION BY status ORDER BY prefix) AS prev FROM login_log_name_tree)
    WHERE prev IS NOT NULL)
  WHERE p <> ''
  ON CONFLICT (status, prefix) DO NOTHING;
UPDATE login_log_name_tree SET n = (SELECT sum(own) FROM login_log_name_tree AS c
  WHERE c.status = login_log_name_tree.status AND c.prefix >= login_log_name_tree.prefix AND c.prefix < login_log_name_tree.prefix || CAST(x'F5' AS TEXT));
DELETE FROM login_log_ip_tree;
INSERT INTO login_log_ip_tree (status, prefix, n, own)
  SELECT status, substr(ip, 1, 48), 0, count(*) FROM login_log WHERE ip <> '' GROUP BY 1, 2;
INSERT INTO login_log_ip_tree (status, prefix, n, own)
  SELECT status, p, 0, 0 FROM (
    SELECT status, substr(prefix, 1, (SELECT coalesce(max(k), 0) FROM prefix_lengths WHERE k <= min(length(prefix), length(prev)) AND substr(prefix, 1, k) = substr(prev, 1, k))) AS p
    FROM (SELECT status, prefix, lag(prefix) OVER (PARTITION BY status ORDER BY prefix) AS prev FROM login_log_ip_tree)
    WHERE prev IS NOT NULL)
  WHERE p <> ''
  ON CONFLICT (status, prefix) DO NOTHING;
UPDATE login_log_ip_tree SET n = (SELECT sum(own) FROM login_log_ip_tree AS c
  WHERE c.status = login_log_ip_tree.status AND c.prefix >= login_log_ip_tree.prefix AND c.prefix < login_log_ip_tree.prefix || CAST(x'F5' AS TEXT));
DELETE FROM op_log_name_tree;
INSERT INTO op_log_name_tree (status, prefix, n, own)
  SELECT status, substr(operator_name, 1, 48) COLLATE NOCASE, 0, count(*) FROM op_log WHERE operator_name <> '' GROUP BY 1, 2;
INSERT INTO op_log_name_tree (status, prefix, n, own)
  SELECT status, p, 0, 0 FROM (
    SELECT status, substr(prefix, 1, (SELECT coalesce(max(k), 0) FROM prefix_lengths WHERE k <= min(length(prefix), length(prev)) AND substr(prefix, 1, k) = substr(prev, 1, k) COLLATE NOCASE)) AS p
    FROM (SELECT status, prefix, lag(prefix) OVER (PARTITION BY status ORDER BY prefix) AS prev FROM op_log_name_tree)
    WHERE prev IS NOT NULL)
  WHERE p <> ''
  ON CONFLICT (status, prefix) DO NOTHING;
UPDATE op_log_name_tree SET n = (SELECT sum(own) FROM op_log_name_tree AS c
  WHERE c.status = op_log_name_tree.status AND c.prefix >= op_log_name_tree.prefix AND c.prefix < op_log_name_tree.prefix || CAST(x'F5' AS TEXT));

CREATE TRIGGER login_log_counts_insert AFTER INSERT ON login_log BEGIN
  INSERT INTO login_log_day_counts (day, status, n) VALUES (substr(NEW.created_at, 1, 10), NEW.status, 1)
    ON CONFLICT (day, status) DO UPDATE SET n = n + 1;
  -- A new key: create it and the longer of the starts it shares with its neighbours (the shorter
  -- one is the start the neighbours share, already there), each counting the rows already under
  -- it; then one more row under every stored start of the key.
  INSERT INTO login_log_name_tree (status, prefix, n, own)
    SELECT NEW.status, p, coalesce((SELECT n FROM login_log_name_tree WHERE status = NEW.status AND prefix >= p AND prefix < p || CAST(x'F5' AS TEXT) ORDER BY prefix LIMIT 1), 0), 0
    FROM (SELECT substr(NEW.login_name, 1, 48) AS p
          UNION ALL
          SELECT substr(NEW.login_name, 1, max(k)) FROM prefix_lengths,
            (SELECT (SELECT prefix FROM login_log_name_tree WHERE status = NEW.status AND prefix < substr(NEW.login_name, 1, 48) AND own > 0 ORDER BY prefix DESC LIMIT 1) AS y
             UNION ALL SELECT (SELECT prefix FROM login_log_name_tree WHERE status = NEW.status AND prefix > substr(NEW.login_name, 1, 48) AND own > 0 ORDER BY prefix LIMIT 1))
          WHERE k <= length(NEW.login_name) AND substr(NEW.login_name, 1, k) = substr(y, 1, k) COLLATE NOCASE)
    WHERE p <> '' AND NOT EXISTS (SELECT 1 FROM login_log_name_tree WHERE status = NEW.status AND prefix = substr(NEW.login_name, 1, 48))
    ON CONFLICT (status, prefix) DO NOTHING;
  UPDATE login_log_name_tree SET n = n + 1, own = own + (prefix = substr(NEW.login_name, 1, 48))
    WHERE status = NEW.status AND prefix IN (SELECT substr(NEW.login_name, 1, k) FROM prefix_lengths WHERE k <= length(NEW.login_name));
  INSERT INTO login_log_ip_tree (status, prefix, n, own)
    SELECT NEW.status, p, coalesce((SELECT n FROM login_log_ip_tree WHERE status = NEW.status AND prefix >= p AND prefix < p || CAST(x'F5' AS TEXT) ORDER BY prefix LIMIT 1), 0), 0
    FROM (SELECT substr(NEW.ip, 1, 48) AS p
          UNION ALL
          SELECT substr(NEW.ip, 1, max(k)) FROM prefix_lengths,
            (SELECT (SELECT prefix FROM login_log_ip_tree WHERE status = NEW.status AND prefix < substr(NEW.ip, 1, 48) AND own > 0 ORDER BY prefix DESC LIMIT 1) AS y
             UNION ALL SELECT (SELECT prefix FROM login_log_ip_tree WHERE status = NEW.status AND prefix > substr(NEW.ip, 1, 48) AND own > 0 ORDER BY prefix LIMIT 1))
          WHERE k <= length(NEW.ip) AND substr(NEW.ip, 1, k) = substr(y, 1, k))
    WHERE p <> '' AND NOT EXISTS (SELECT 1 FROM login_log_ip_tree WHERE status = NEW.status AND prefix = substr(NEW.ip, 1, 48))
    ON CONFLICT (status, prefix) DO NOTHING;
  UPDATE login_log_ip_tree SET n = n + 1, own = own + (prefix = substr(NEW.ip, 1, 48))
    WHERE status = NEW.status AND prefix IN (SELECT substr(NEW.ip, 1, k) FROM prefix_lengths WHERE k <= length(NEW.ip));
END;

CREATE TRIGGER login_log_counts_delete AFTER DELETE ON login_log
WHEN NOT EXISTS (SELECT 1 FROM log_bulk_delete WHERE log = 'login_log') BEGIN
  UPDATE login_log_day_counts SET n = n - 1 WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status;
  DELETE FROM login_log_day_counts WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status AND n <= 0;
  -- One row fewer under every stored start of the key; the starts left with none go (only when the
  -- key itself has none left: otherwise every start of it still counts its rows).
  UPDATE login_log_name_tree SET n = n - 1, own = own - (prefix = substr(OLD.login_name, 1, 48))
    WHERE status = OLD.status AND prefix IN (SELECT substr(OLD.login_name, 1, k) FROM prefix_lengths WHERE k <= length(OLD.login_name));
  DELETE FROM login_log_name_tree WHERE status = OLD.status AND n <= 0 AND prefix IN (SELECT substr(OLD.login_name, 1, k) FROM prefix_lengths WHERE k <= length(OLD.login_name))
    AND NOT EXISTS (SELECT 1 FROM login_log_name_tree WHERE status = OLD.status AND prefix = substr(OLD.login_name, 1, 48) AND n > 0);
  UPDATE login_log_ip_tree SET n = n - 1, own = own - (prefix = substr(OLD.ip, 1, 48))
    WHERE status = OLD.status AND prefix IN (SELECT substr(OLD.ip, 1, k) FROM prefix_lengths WHERE k <= length(OLD.ip));
  DELETE FROM login_log_ip_tree WHERE status = OLD.status AND n <= 0 AND prefix IN (SELECT substr(OLD.ip, 1, k) FROM prefix_lengths WHERE k <= length(OLD.ip))
    AND NOT EXISTS (SELECT 1 FROM login_log_ip_tree WHERE status = OLD.status AND prefix = substr(OLD.ip, 1, 48) AND n > 0);
END;

-- Log rows are written once and never edited; an edit of a counted column would leave the counts
-- wrong, so it is refused rather than silently miscounted.
CREATE TRIGGER login_log_counted_columns_fixed BEFORE UPDATE OF login_name, ip, status, created_at ON login_log BEGIN
  SELECT RAISE(ABORT, 'login_log: login_name, ip, status and created_at are counted (login_log_day_counts, login_log_*_tree) and cannot change');
END;

CREATE TRIGGER op_log_counts_insert AFTER INSERT ON op_log BEGIN
  INSERT INTO op_log_day_counts (day, status, n) VALUES (substr(NEW.created_at, 1, 10), NEW.status, 1)
    ON CONFLICT (day, status) DO UPDATE SET n = n + 1;
  INSERT INTO op_log_module_counts (module, action, status, n) VALUES (NEW.module, NEW.action, NEW.status, 1)
    ON CONFLICT (module, action, status) DO UPDATE SET n = n + 1;
  -- A row without an operator has no key (NULL): it is in no tree, and no prefix matches it.
  INSERT INTO op_log_name_tree (status, prefix, n, own)
    SELECT NEW.status, p, coalesce((SELECT n FROM op_log_name_tree WHERE status = NEW.status AND prefix >= p AND prefix < p || CAST(x'F5' AS TEXT) ORDER BY prefix LIMIT 1), 0), 0
    FROM (SELECT substr(NEW.operator_name, 1, 48) AS p
          UNION ALL
          SELECT substr(NEW.operator_name, 1, max(k)) FROM prefix_lengths,
            (SELECT (SELECT prefix FROM op_log_name_tree WHERE status = NEW.status AND prefix < substr(NEW.operator_name, 1, 48) AND own > 0 ORDER BY prefix DESC LIMIT 1) AS y
             UNION ALL SELECT (SELECT prefix FROM op_log_name_tree WHERE status = NEW.status AND prefix > substr(NEW.operator_name, 1, 48) AND own > 0 ORDER BY prefix LIMIT 1))
          WHERE k <= length(NEW.operator_name) AND substr(NEW.operator_name, 1, k) = substr(y, 1, k) COLLATE NOCASE)
    WHERE p <> '' AND NOT EXISTS (SELECT 1 FROM op_log_name_tree WHERE status = NEW.status AND prefix = substr(NEW.operator_name, 1, 48))
    ON CONFLICT (status, prefix) DO NOTHING;
  UPDATE op_log_name_tree SET n = n + 1, own = own + (prefix = substr(NEW.operator_name, 1, 48))
    WHERE status = NEW.status AND prefix IN (SELECT substr(NEW.operator_name, 1, k) FROM prefix_lengths WHERE k <= length(NEW.operator_name));
END;

CREATE TRIGGER op_log_counts_delete AFTER DELETE ON op_log
WHEN NOT EXISTS (SELECT 1 FROM log_bulk_delete WHERE log = 'op_log') BEGIN
  UPDATE op_log_day_counts SET n = n - 1 WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status;
  DELETE FROM op_log_day_counts WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status AND n <= 0;
  UPDATE op_log_module_counts SET n = n - 1 WHERE module = OLD.module AND action = OLD.action AND status = OLD.status;
  DELETE FROM op_log_module_counts WHERE module = OLD.module AND action = OLD.action AND status = OLD.status AND n <= 0;
  UPDATE op_log_name_tree SET n = n - 1, own = own - (prefix = substr(OLD.operator_name, 1, 48))
    WHERE status = OLD.status AND prefix IN (SELECT substr(OLD.operator_name, 1, k) FROM prefix_lengths WHERE k <= length(OLD.operator_name));
  DELETE FROM op_log_name_tree WHERE status = OLD.status AND n <= 0 AND prefix IN (SELECT substr(OLD.operator_name, 1, k) FROM prefix_lengths WHERE k <= length(OLD.operator_name))
    AND NOT EXISTS (SELECT 1 FROM op_log_name_tree WHERE status = OLD.status AND prefix = substr(OLD.operator_name, 1, 48) AND n > 0);
END;
