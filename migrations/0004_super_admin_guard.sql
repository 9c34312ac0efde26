-- Adds the guard rule `super_admin_only` (see 0002_guard_failures.sql for the mechanism).
-- SQLite cannot alter a CHECK constraint, and guard_failures never holds a row, so the table is
-- recreated with the full rule list (works the same under bun:sqlite and D1 migrations).
DROP TABLE guard_failures;
CREATE TABLE guard_failures (
  rule TEXT NOT NULL,
  -- No enabled user holding the enabled superAdmin role would remain.
  CONSTRAINT guard_last_super_admin CHECK (rule <> 'last_super_admin'),
  -- The record's version is not the one the client read (optimistic locking).
  CONSTRAINT guard_stale_version CHECK (rule <> 'stale_version'),
  -- A role to delete is still granted to a user.
  CONSTRAINT guard_role_in_use CHECK (rule <> 'role_in_use'),
  -- A caller who is not a super admin touched a user holding the superAdmin role, or tried to
  -- grant that role (only super admins may).
  CONSTRAINT guard_super_admin_only CHECK (rule <> 'super_admin_only'),
  -- Any other name is a programming error; refuse it as well.
  CONSTRAINT guard_unknown_rule CHECK (rule IN ('last_super_admin', 'stale_version', 'role_in_use', 'super_admin_only'))
);
