-- Scheduled jobs (sysJob, sysJobLog; docs/jobs.md). A row schedules one handler that is registered
-- in code by name (src/modules/jobs/registry.ts): the table never names a call target of its own, and
-- a row whose handler is not registered runs nothing (each due time is reported as a failure).
-- Both runtimes drive the same table: the server's minute timer and the Workers cron trigger call
-- one tick, which runs what is due.
CREATE TABLE jobs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  name           TEXT    NOT NULL,
  handler        TEXT    NOT NULL UNIQUE,
  cron           TEXT    NOT NULL,
  status         TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  misfire_policy TEXT    NOT NULL DEFAULT 'fire' CHECK (misfire_policy IN ('fire', 'skip')),
  concurrent     INTEGER NOT NULL DEFAULT 0 CHECK (concurrent IN (0, 1)),
  -- When a run last started (a run-now counts), and the next due time (for display; the tick decides
  -- from cron and the times below).
  last_run_at    TEXT,
  next_run_at    TEXT,
  -- Due times before this one never count as missed: the schedule (re)started here (seeded, cron
  -- edited, job enabled).
  schedule_from  TEXT    NOT NULL,
  -- The claim of a run of a non-concurrent job: since when and by which run (NULL: free). A claim
  -- older than its handler's stale limit is taken over, the lost run reported as interrupted.
  claimed_at     TEXT,
  claim_id       TEXT,
  -- The last run stopped at its budget with work left: the next tick continues whatever the cron.
  resume         INTEGER NOT NULL DEFAULT 0 CHECK (resume IN (0, 1)),
  version        INTEGER NOT NULL DEFAULT 1,
  created_at     TEXT    NOT NULL,
  updated_at     TEXT    NOT NULL
);

-- One run each, written when it ends (an interrupted one by whoever takes its claim over).
CREATE TABLE job_log (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id      INTEGER NOT NULL,
  job_name    TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('success', 'failure')),
  message     TEXT    NOT NULL DEFAULT '',
  started_at  TEXT    NOT NULL,
  finished_at TEXT    NOT NULL,
  duration_ms INTEGER NOT NULL
);
CREATE INDEX job_log_started_at ON job_log (started_at);
CREATE INDEX job_log_job_started ON job_log (job_id, started_at);
CREATE INDEX job_log_status_started ON job_log (status, started_at);

-- Today's periodic work as jobs, with today's defaults: the cleanup ran every 10 minutes on the
-- server (every 15 on Workers, whose cron trigger now ticks every minute), the backup every
-- BACKUP_EVERY_HOURS = 24 hours (the server maps that setting onto this row at start-up while the row
-- was never edited through the API: src/modules/jobs/schedule-config.ts).
INSERT INTO jobs (name, handler, cron, status, misfire_policy, concurrent, schedule_from, created_at, updated_at)
SELECT j.name, j.handler, j.cron, 'enabled', 'fire', 0, t.now, t.now, t.now
FROM (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now) t,
  (SELECT 'Expired sessions, captchas and rate limits' AS name, 'expiredCleanup' AS handler, '*/10 * * * *' AS cron, 1 AS sort
   UNION ALL SELECT 'Log retention (LOG_RETENTION_DAYS)', 'logRetention', '*/10 * * * *', 2
   UNION ALL SELECT 'Blob sweep (BLOB_GRACE_HOURS)', 'blobSweep', '*/10 * * * *', 3
   UNION ALL SELECT 'Database backup (server only)', 'backup', '0 3 * * *', 4) j
ORDER BY j.sort;

-- The pages and their buttons under "System management".
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
VALUES (29, 'Scheduled jobs', 'menu', '/system/job', 'system/JobList', NULL, NULL, 10, 'Jobs');
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
VALUES (29, 'Job log', 'menu', '/system/jobLog', 'system/JobLog', NULL, NULL, 11, 'JobLog');
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT m.id, b.title, 'button', NULL, NULL, NULL, b.permission, b.sort
FROM menus m,
  (SELECT 'Jobs: page' AS title, 'sys:job:page' AS permission, 1 AS sort
   UNION ALL SELECT 'Jobs: detail', 'sys:job:detail', 2
   UNION ALL SELECT 'Jobs: edit', 'sys:job:edit', 3
   UNION ALL SELECT 'Jobs: enable/disable', 'sys:job:changeStatus', 4
   UNION ALL SELECT 'Jobs: run now', 'sys:job:run', 5) b
WHERE m.path = '/system/job' AND m.type = 'menu';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT m.id, b.title, 'button', NULL, NULL, NULL, b.permission, b.sort
FROM menus m,
  (SELECT 'Job log: page' AS title, 'sys:jobLog:page' AS permission, 1 AS sort
   UNION ALL SELECT 'Job log: delete', 'sys:jobLog:delete', 2
   UNION ALL SELECT 'Job log: clear', 'sys:jobLog:clear', 3) b
WHERE m.path = '/system/jobLog' AND m.type = 'menu';
