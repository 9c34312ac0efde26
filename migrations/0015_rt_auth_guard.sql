-- Guard rules of deferred authentication for writes (src/http/auth-gate.ts): a write whose auth
-- statement travelled in an earlier batch (with the write's pre-read) repeats the caller's check
-- as guard statements at the head of its write batch, so a session revoked, a user disabled or a
-- permission removed between the two batches still changes nothing (see 0002_guard_failures.sql
-- for the mechanism). A table of its own: the other guard tables are never recreated for it.
CREATE TABLE auth_guard_failures (
  rule TEXT NOT NULL,
  -- The caller's session is revoked or expired, or their user disabled or deleted (401).
  CONSTRAINT guard_session_ended CHECK (rule <> 'session_ended'),
  -- The caller no longer holds the route's permission code and is not a super admin (403).
  CONSTRAINT guard_not_permitted CHECK (rule <> 'not_permitted'),
  CONSTRAINT auth_guard_unknown_rule CHECK (rule IN ('session_ended', 'not_permitted'))
);
