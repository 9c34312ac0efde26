-- A second factor (contract: "Second factor"; docs/second-factor.md): TOTP, recovery codes and
-- passkeys per user, the login challenge between the password and the factor, the role flag
-- mfaRequired with its code, and the login log's record of which factor was used.

-- The role flag: a user holding an enabled such role and no active factor is restricted to
-- enrolling (src/access/auth-statement.ts). Part of what the `menus` cache version covers (what a
-- user's roles give them), so a change applies on the holder's very next request.
ALTER TABLE roles ADD COLUMN mfa_required INTEGER NOT NULL DEFAULT 0 CHECK (mfa_required IN (0, 1));
CREATE TRIGGER roles_version_mfa AFTER UPDATE OF mfa_required ON roles BEGIN UPDATE cache_versions SET n = n + 1 WHERE name = 'menus'; END;

-- Whether the user has an active factor (a confirmed TOTP or a passkey): read by the per-request
-- auth statement, so it is a column of the user's row, set in the same batch as every change of the
-- user's factors (src/modules/mfa/factors.ts, mfaStateQuery). Not a trigger: a replay of rows
-- (restore --to worker) loads it like any column, and only derived tables are trigger-written.
ALTER TABLE users ADD COLUMN mfa_enabled INTEGER NOT NULL DEFAULT 0;

-- One TOTP secret per user, sealed (AES-256-GCM under a key derived from the server secret, bound
-- to the user: src/core/secret-box.ts). confirmed_at NULL: an enrolment not confirmed yet (not a
-- factor). last_step: the time step of the last code accepted; no code of that step or before is
-- accepted again (no replay within a code's window).
CREATE TABLE mfa_totp (
  user_id      INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  secret       TEXT    NOT NULL,
  confirmed_at TEXT,
  last_step    INTEGER,
  created_at   TEXT    NOT NULL
);

-- Single-use recovery codes, stored as keyed hashes (src/core/recovery-codes.ts); used_at set by
-- the write that accepts one.
CREATE TABLE mfa_recovery_codes (
  user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  code_hash TEXT    NOT NULL,
  used_at   TEXT,
  PRIMARY KEY (user_id, code_hash)
) WITHOUT ROWID;

-- Passkeys (WebAuthn credentials) as a second factor: the COSE public key (base64url) and the
-- signature counter last seen.
CREATE TABLE mfa_passkeys (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id       INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  credential_id TEXT    NOT NULL UNIQUE,
  public_key    TEXT    NOT NULL,
  counter       INTEGER NOT NULL DEFAULT 0,
  transports    TEXT    NOT NULL DEFAULT '[]',
  name          TEXT    NOT NULL,
  created_at    TEXT    NOT NULL,
  last_used_at  TEXT
);
CREATE INDEX mfa_passkeys_user ON mfa_passkeys (user_id);

-- Short-lived, single-use challenges, stored by the keyed hash of what the client holds:
-- 'login' between the password and the factor (no session exists yet; it remembers the password
-- hash the password step checked, so a reset in between ends it), 'register' between a passkey's
-- options and its registration (bound to the session that asked). webauthn_challenge: the
-- challenge of the WebAuthn ceremony under way.
CREATE TABLE mfa_challenges (
  id                 TEXT    PRIMARY KEY,
  kind               TEXT    NOT NULL CHECK (kind IN ('login', 'register')),
  user_id            INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  session_id         TEXT,
  login_name         TEXT,
  password_hash      TEXT,
  webauthn_challenge TEXT,
  expires_at         TEXT    NOT NULL,
  created_at         TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX mfa_challenges_expires ON mfa_challenges (expires_at);
CREATE INDEX mfa_challenges_user ON mfa_challenges (user_id);

-- Which factor completed a login (NULL: a password-only login, or a failure before a factor).
ALTER TABLE login_log ADD COLUMN factor TEXT CHECK (factor IN ('totp', 'passkey', 'recovery'));

-- A write by a session restricted to enrolling (0015's mechanism; a table of its own).
CREATE TABLE mfa_guard_failures (
  rule TEXT NOT NULL,
  -- The caller holds an enabled mfaRequired role and has no active factor (403).
  CONSTRAINT guard_mfa_required CHECK (rule <> 'mfa_required'),
  CONSTRAINT mfa_guard_unknown_rule CHECK (rule IN ('mfa_required'))
);

-- The codes of the two new operations, as buttons under their pages.
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT id, 'Roles: requireMfa', 'button', NULL, NULL, NULL, 'sys:role:requireMfa', 11
FROM menus WHERE path = '/permission/role' AND type = 'menu';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort)
SELECT parent_id, 'Users: resetMfa', 'button', NULL, NULL, NULL, 'sys:user:resetMfa', 10
FROM menus WHERE permission = 'sys:user:resetPassword' AND type = 'button';
