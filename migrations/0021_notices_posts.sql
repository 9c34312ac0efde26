-- Standard modules (issue 27), part 2: notices with per-user read marks, and posts (job
-- positions) that users hold. See docs/standard-modules.md.

-- Notices. `content` is HTML as sanitised on write (core/html-sanitize.ts), never as sent.
-- `created_by` is the author (data scope of the notice pages goes by it, as for files); the name is
-- kept as it was then, so a deleted author's notices still say who wrote them.
CREATE TABLE notices (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  title           TEXT    NOT NULL,
  type            TEXT    NOT NULL CHECK (type IN ('notice', 'announcement')),
  content         TEXT    NOT NULL DEFAULT '',
  status          TEXT    NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published', 'closed')),
  created_by      INTEGER,
  created_by_name TEXT    NOT NULL DEFAULT '',
  version         INTEGER NOT NULL DEFAULT 1,
  created_at      TEXT    NOT NULL,
  updated_at      TEXT    NOT NULL
);
-- "Latest published, newest first" and the management page's default order.
CREATE INDEX notices_status_created_at ON notices (status, created_at, id);
CREATE INDEX notices_created_at ON notices (created_at, id);
CREATE INDEX notices_created_by ON notices (created_by);

-- Who has read which notice: one row per (user, notice), gone with either.
CREATE TABLE notice_reads (
  user_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  notice_id INTEGER NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
  read_at   TEXT    NOT NULL,
  PRIMARY KEY (user_id, notice_id)
) WITHOUT ROWID;
CREATE INDEX notice_reads_notice ON notice_reads (notice_id);

-- Posts (job positions). Codes are unique case-insensitively.
CREATE TABLE posts (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  code       TEXT    NOT NULL,
  name       TEXT    NOT NULL,
  sort       INTEGER NOT NULL DEFAULT 0,
  status     TEXT    NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  remark     TEXT,
  version    INTEGER NOT NULL DEFAULT 1,
  created_at TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);
CREATE UNIQUE INDEX posts_code ON posts (code COLLATE NOCASE);
CREATE INDEX posts_created_at ON posts (created_at, id);

-- The posts a user holds. A user's delete takes its rows along; a post's delete is refused while
-- a user holds it (a guard of the delete, and this key behind it).
CREATE TABLE user_post (
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  post_id INTEGER NOT NULL REFERENCES posts (id),
  PRIMARY KEY (user_id, post_id)
) WITHOUT ROWID;
CREATE INDEX user_post_post ON user_post (post_id, user_id);

-- Guard rules of these modules (mechanism: 0002_guard_failures.sql), in a table of their own.
CREATE TABLE notice_post_guard_failures (
  rule TEXT NOT NULL,
  -- A post to delete is still held by a user.
  CONSTRAINT guard_post_in_use CHECK (rule <> 'post_in_use'),
  -- A user would be given a post that does not exist.
  CONSTRAINT guard_post_unknown CHECK (rule <> 'post_unknown'),
  CONSTRAINT notice_post_guard_unknown_rule CHECK (rule IN ('post_in_use', 'post_unknown'))
);

-- Pages and buttons: notices under "System management", posts under "User management".
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
SELECT id, 'Notices', 'menu', '/system/notice', 'system/NoticeList', NULL, NULL, 10, 'Notices' FROM menus WHERE path = '/system' AND type = 'directory';
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort, name)
SELECT id, 'Posts', 'menu', '/user/post', 'user/PostList', NULL, NULL, 3, 'Posts' FROM menus WHERE path = '/user' AND type = 'directory';
-- Each button under its page, found by the page's path (ids are not fixed).
INSERT INTO menus (parent_id, title, type, path, component, icon, permission, sort) VALUES
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: page', 'button', NULL, NULL, NULL, 'sys:notice:page', 1),
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: detail', 'button', NULL, NULL, NULL, 'sys:notice:detail', 2),
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: add', 'button', NULL, NULL, NULL, 'sys:notice:add', 3),
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: edit', 'button', NULL, NULL, NULL, 'sys:notice:edit', 4),
  ((SELECT id FROM menus WHERE path = '/system/notice' AND type = 'menu'), 'Notices: delete', 'button', NULL, NULL, NULL, 'sys:notice:delete', 5),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: page', 'button', NULL, NULL, NULL, 'sys:post:page', 1),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: list', 'button', NULL, NULL, NULL, 'sys:post:list', 2),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: detail', 'button', NULL, NULL, NULL, 'sys:post:detail', 3),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: add', 'button', NULL, NULL, NULL, 'sys:post:add', 4),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: edit', 'button', NULL, NULL, NULL, 'sys:post:edit', 5),
  ((SELECT id FROM menus WHERE path = '/user/post' AND type = 'menu'), 'Posts: delete', 'button', NULL, NULL, NULL, 'sys:post:delete', 6);
