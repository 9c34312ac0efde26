-- API keys (issue 30; docs/api-keys.md): credentials for scripts and integrations that never
-- exceed their owner. A key is `ea_<id>_<random>`; only SHA-256 of the random part is stored
-- (`secret_hash`, lowercase hex). The key's codes are a subset of its owner's codes when created,
-- and every request with the key also needs the owner to hold the code at that moment.

CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  -- The owner (the creator). A deleted owner takes their keys along.
  user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT    NOT NULL,
  secret_hash  TEXT    NOT NULL,
  expires_at   TEXT    NOT NULL,
  -- JSON array of CIDR blocks (IPv4 or IPv6); empty: any address.
  allowed_ips  TEXT    NOT NULL DEFAULT '[]',
  revoked_at   TEXT,
  -- Who revoked it (the owner or an administrator), for the record.
  revoked_by   INTEGER,
  -- Recorded at most once per API_KEY_LAST_USED_SECONDS per key (http/auth.ts), not per request.
  last_used_at TEXT,
  last_used_ip TEXT,
  created_at   TEXT    NOT NULL
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at);
CREATE INDEX api_keys_created_at ON api_keys (created_at, id);

-- The codes a key may use: one row per (key, code), gone with the key.
CREATE TABLE api_key_codes (
  key_id INTEGER NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  code   TEXT    NOT NULL,
  PRIMARY KEY (key_id, code)
) WITHOUT ROWID;

-- Op-log rows made through a key name it (kept as it was, like operator_name).
ALTER TABLE op_log ADD COLUMN api_key_id INTEGER;
ALTER TABLE op_log ADD COLUMN api_key_name TEXT;

-- Guard rules of keys (mechanism: 0002_guard_failures.sql), in a table of their own.
CREATE TABLE api_key_guard_failures (
  rule TEXT NOT NULL,
  -- A key would be given a code its creator does not hold (403).
  CONSTRAINT guard_key_code_not_held CHECK (rule <> 'key_code_not_held'),
  -- A key would be given a code no menu carries (400).
  CONSTRAINT guard_key_code_unknown CHECK (rule <> 'key_code_unknown'),
  CONSTRAINT api_key_guard_unknown_rule CHECK (rule IN ('key_code_not_held', 'key_code_unknown'))
);

-- The page and its buttons, under "System management".
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
SELECT id, 'API keys', 'menu', '/system/apiKey', 'system/ApiKeyList', NULL, NULL, 12, 'ApiKeys' FROM menus WHERE path = '/system' AND type = 'directory';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort) VALUES
  ((SELECT id FROM menus WHERE path = '/system/apiKey' AND type = 'menu'), 'API keys: page (all in scope)', 'button', NULL, NULL, NULL, 'sys:apiKey:page', 1),
  ((SELECT id FROM menus WHERE path = '/system/apiKey' AND type = 'menu'), 'API keys: add', 'button', NULL, NULL, NULL, 'sys:apiKey:add', 2),
  ((SELECT id FROM menus WHERE path = '/system/apiKey' AND type = 'menu'), 'API keys: revoke (all in scope)', 'button', NULL, NULL, NULL, 'sys:apiKey:revoke', 3);
