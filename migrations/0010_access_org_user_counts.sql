-- Users per organisation, kept by triggers (issue 11, "user page under a data scope").
-- A page of the users in a scope (or under an `orgId` filter) with no other filter has as many
-- rows as the sum of these counts over the scope's organisations: a few hundred primary-key reads
-- instead of counting thousands of users through an index (what made a branch manager's page ~3x
-- slower than an `all` caller's, whose count is SQLite's whole-table count).
--
-- Every write on users keeps it exact, whatever writes them (the service, the admin bootstrap, a
-- seed script, plain SQL): the triggers are the only writers. Users have no other state that the
-- page hides (no soft delete; disabled users are listed), so n = every user of the organisation.
-- A DERIVED table: a copy of the database (VACUUM INTO backup, restore on Bun) carries it with its
-- triggers; a replay of rows (restore --to worker) must rebuild it instead of loading it
-- (src/db/derived-tables.ts lists it, with the rebuild below).
-- A migration that rebuilds `users` (CREATE users_v2 … DROP users) drops these triggers with it and
-- must create them again: test/org-user-counts.test.ts fails if any of them is missing.
-- Plain SQL for both the Bun migrator and `wrangler d1 migrations apply`; no BEGIN/COMMIT.

CREATE TABLE org_user_counts (
  org_id INTEGER PRIMARY KEY,
  n      INTEGER NOT NULL
);

INSERT INTO org_user_counts (org_id, n) SELECT org_id, count(*) FROM users WHERE org_id IS NOT NULL GROUP BY org_id;

CREATE TRIGGER users_org_count_insert AFTER INSERT ON users WHEN NEW.org_id IS NOT NULL
BEGIN
  INSERT INTO org_user_counts (org_id, n) VALUES (NEW.org_id, 1) ON CONFLICT (org_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER users_org_count_delete AFTER DELETE ON users WHEN OLD.org_id IS NOT NULL
BEGIN
  UPDATE org_user_counts SET n = n - 1 WHERE org_id = OLD.org_id;
END;

CREATE TRIGGER users_org_count_move AFTER UPDATE OF org_id ON users WHEN OLD.org_id IS NOT NEW.org_id
BEGIN
  UPDATE org_user_counts SET n = n - 1 WHERE org_id = OLD.org_id;
  INSERT INTO org_user_counts (org_id, n) SELECT NEW.org_id, 1 WHERE NEW.org_id IS NOT NULL ON CONFLICT (org_id) DO UPDATE SET n = n + 1;
END;

-- An organisation can only be deleted without users (n = 0); its row goes with it.
CREATE TRIGGER orgs_user_count_delete AFTER DELETE ON orgs
BEGIN
  DELETE FROM org_user_counts WHERE org_id = OLD.id;
END;
