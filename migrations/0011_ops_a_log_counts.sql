-- Exact page totals of the two logs without walking a million index entries.
--
-- A COUNT over an index reads every matching entry: the login log's "user0" prefix (970k of 1M
-- rows) took ~70 ms, a broad status or a date range covering everything as long. These tables
-- hold the number of log rows per key, kept by the triggers below in the same statement as the
-- log write (so in the same transaction/batch: they can never disagree with the log), and the
-- page's count reads them instead when the filter is one they answer (see src/db/log-counts.ts):
--   *_day_counts   rows per UTC day and status  (no filter, status, date ranges)
--   *_name_counts  rows per login/operator name and status  (name prefix, with or without status;
--                  an op-log row without an operator counts under '', which no prefix matches)
--   op_log_module_counts  rows per module, action and status  (module and/or action, status)
-- They are derived data: a restore replays the logs and lets the triggers rebuild them
-- (scripts/restore-worker.ts leaves them out). A key whose count falls to 0 is removed, so names
-- seen once and expired by retention do not pile up.

CREATE TABLE login_log_day_counts (
  day    TEXT    NOT NULL,
  status TEXT    NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (day, status)
) WITHOUT ROWID;

CREATE TABLE login_log_name_counts (
  login_name TEXT    NOT NULL COLLATE NOCASE,
  status     TEXT    NOT NULL,
  n          INTEGER NOT NULL,
  PRIMARY KEY (login_name, status)
) WITHOUT ROWID;

CREATE TABLE op_log_day_counts (
  day    TEXT    NOT NULL,
  status INTEGER NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (day, status)
) WITHOUT ROWID;

CREATE TABLE op_log_name_counts (
  operator_name TEXT    NOT NULL COLLATE NOCASE,
  status        INTEGER NOT NULL,
  n             INTEGER NOT NULL,
  PRIMARY KEY (operator_name, status)
) WITHOUT ROWID;

CREATE TABLE op_log_module_counts (
  module TEXT    NOT NULL,
  action TEXT    NOT NULL,
  status INTEGER NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (module, action, status)
) WITHOUT ROWID;

INSERT INTO login_log_day_counts (day, status, n)
  SELECT substr(created_at, 1, 10), status, count(*) FROM login_log GROUP BY 1, 2;
INSERT INTO login_log_name_counts (login_name, status, n)
  SELECT login_name COLLATE NOCASE, status, count(*) FROM login_log GROUP BY 1, 2;
INSERT INTO op_log_day_counts (day, status, n)
  SELECT substr(created_at, 1, 10), status, count(*) FROM op_log GROUP BY 1, 2;
INSERT INTO op_log_name_counts (operator_name, status, n)
  SELECT coalesce(operator_name, '') COLLATE NOCASE, status, count(*) FROM op_log GROUP BY 1, 2;
INSERT INTO op_log_module_counts (module, action, status, n)
  SELECT module, action, status, count(*) FROM op_log GROUP BY 1, 2, 3;

CREATE TRIGGER login_log_counts_insert AFTER INSERT ON login_log BEGIN
  INSERT INTO login_log_day_counts (day, status, n) VALUES (substr(NEW.created_at, 1, 10), NEW.status, 1)
    ON CONFLICT (day, status) DO UPDATE SET n = n + 1;
  INSERT INTO login_log_name_counts (login_name, status, n) VALUES (NEW.login_name, NEW.status, 1)
    ON CONFLICT (login_name, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER login_log_counts_delete AFTER DELETE ON login_log BEGIN
  UPDATE login_log_day_counts SET n = n - 1 WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status;
  DELETE FROM login_log_day_counts WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status AND n <= 0;
  UPDATE login_log_name_counts SET n = n - 1 WHERE login_name = OLD.login_name AND status = OLD.status;
  DELETE FROM login_log_name_counts WHERE login_name = OLD.login_name AND status = OLD.status AND n <= 0;
END;

-- Log rows are written once and never edited; an edit of a counted column would leave the counts
-- wrong, so it is refused rather than silently miscounted.
CREATE TRIGGER login_log_counted_columns_fixed BEFORE UPDATE OF login_name, status, created_at ON login_log BEGIN
  SELECT RAISE(ABORT, 'login_log: login_name, status and created_at are counted (login_log_*_counts) and cannot change');
END;

CREATE TRIGGER op_log_counts_insert AFTER INSERT ON op_log BEGIN
  INSERT INTO op_log_day_counts (day, status, n) VALUES (substr(NEW.created_at, 1, 10), NEW.status, 1)
    ON CONFLICT (day, status) DO UPDATE SET n = n + 1;
  INSERT INTO op_log_module_counts (module, action, status, n) VALUES (NEW.module, NEW.action, NEW.status, 1)
    ON CONFLICT (module, action, status) DO UPDATE SET n = n + 1;
  INSERT INTO op_log_name_counts (operator_name, status, n) VALUES (coalesce(NEW.operator_name, ''), NEW.status, 1)
    ON CONFLICT (operator_name, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER op_log_counts_delete AFTER DELETE ON op_log BEGIN
  UPDATE op_log_day_counts SET n = n - 1 WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status;
  DELETE FROM op_log_day_counts WHERE day = substr(OLD.created_at, 1, 10) AND status = OLD.status AND n <= 0;
  UPDATE op_log_module_counts SET n = n - 1 WHERE module = OLD.module AND action = OLD.action AND status = OLD.status;
  DELETE FROM op_log_module_counts WHERE module = OLD.module AND action = OLD.action AND status = OLD.status AND n <= 0;
  UPDATE op_log_name_counts SET n = n - 1 WHERE operator_name = coalesce(OLD.operator_name, '') AND status = OLD.status;
  DELETE FROM op_log_name_counts WHERE operator_name = coalesce(OLD.operator_name, '') AND status = OLD.status AND n <= 0;
END;

CREATE TRIGGER op_log_counted_columns_fixed BEFORE UPDATE OF module, action, operator_name, status, created_at ON op_log BEGIN
  SELECT RAISE(ABORT, 'op_log: module, action, operator_name, status and created_at are counted (op_log_*_counts) and cannot change');
END;
