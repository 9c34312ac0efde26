-- Business-rule guards that hold inside one atomic write (a Bun transaction or a D1 batch).
-- D1 has no interactive transactions and SQLite has no RAISE() outside triggers, so a write that
-- must be refused by a rule ends its batch with
--   INSERT INTO guard_failures (rule) SELECT '<rule>' WHERE <the rule is broken after the writes>
-- Inserting a rule's name violates that rule's named CHECK constraint, the statement fails and the
-- whole batch rolls back; the constraint name in the error tells the service which rule it was.
-- No row is ever stored here. A new rule needs a new table (SQLite cannot alter a CHECK).
CREATE TABLE guard_failures (
  rule TEXT NOT NULL,
  -- No enabled user holding the enabled superAdmin role would remain.
  CONSTRAINT guard_last_super_admin CHECK (rule <> 'last_super_admin'),
  -- The record's version is not the one the client read (optimistic locking).
  CONSTRAINT guard_stale_version CHECK (rule <> 'stale_version'),
  -- A role to delete is still granted to a user.
  CONSTRAINT guard_role_in_use CHECK (rule <> 'role_in_use'),
  -- Any other name is a programming error; refuse it as well.
  CONSTRAINT guard_unknown_rule CHECK (rule IN ('last_super_admin', 'stale_version', 'role_in_use'))
);
