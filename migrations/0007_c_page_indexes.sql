-- Indexes so every page query the contract allows — each filter with the default newest-first
-- order, each sort field on its own, and the equality filters with a sort — walks an index instead
-- of sorting every matching row (measured by `npm run bench -- logs` over 1M log rows). A page
-- orders by `<field>, id`, and every SQLite index ends with the rowid, so `(field)` serves it.
-- A table's own mix of filters is why some of these look alike.

-- Login log: sort by status; failures sorted by name.
CREATE INDEX login_log_status_id ON login_log (status);
CREATE INDEX login_log_status_login_name ON login_log (status, login_name COLLATE NOCASE);

-- Operation log: one module or one action, newest first (the module+action index cannot order a
-- module-only filter by time); each sortable field; filters combined with a sort.
CREATE INDEX op_log_module_created_at ON op_log (module, created_at);
CREATE INDEX op_log_action_created_at ON op_log (action, created_at);
CREATE INDEX op_log_module_id ON op_log (module);
CREATE INDEX op_log_status_id ON op_log (status);
CREATE INDEX op_log_duration_ms ON op_log (duration_ms);
CREATE INDEX op_log_module_duration_ms ON op_log (module, duration_ms);
CREATE INDEX op_log_status_operator_name ON op_log (status, operator_name COLLATE NOCASE);

-- Users: each sortable field, and the status filter with a name sort.
CREATE INDEX users_login_name_sort ON users (login_name);
CREATE INDEX users_nick_name ON users (nick_name);
CREATE INDEX users_updated_at ON users (updated_at);
CREATE INDEX users_last_login_at ON users (last_login_at);
CREATE INDEX users_status_login_name ON users (status, login_name);

-- Files and images: by extension newest first, and by size.
CREATE INDEX files_kind_extension ON files (kind, extension, created_at);
CREATE INDEX files_kind_size ON files (kind, size);
