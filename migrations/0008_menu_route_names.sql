-- Menu nodes for SPA routers (issue 16): every directory and menu gets a stable route `name`
-- (vue-router route names must be unique; templates such as vue-vben-admin, RuoYi-Vue3 and
-- soybean-admin key routes, tabs and keep-alive caches by it) and a `keep_alive` flag for route meta.
-- Names are unique case-insensitively; buttons carry none (they are not routes).
ALTER TABLE menus ADD COLUMN name TEXT;
ALTER TABLE menus ADD COLUMN keep_alive INTEGER NOT NULL DEFAULT 0 CHECK (keep_alive IN (0, 1));
CREATE UNIQUE INDEX menus_name ON menus (name COLLATE NOCASE) WHERE name IS NOT NULL;

-- The seeded directories and menus of 0001_init.
UPDATE menus SET name = CASE id
  WHEN 1 THEN 'UserManagement'
  WHEN 2 THEN 'Users'
  WHEN 12 THEN 'PermissionManagement'
  WHEN 13 THEN 'Roles'
  WHEN 23 THEN 'Menus'
  WHEN 29 THEN 'SystemManagement'
  WHEN 30 THEN 'Files'
  WHEN 36 THEN 'Images'
  WHEN 42 THEN 'LoginLog'
  WHEN 46 THEN 'OperationLog'
  WHEN 51 THEN 'OnlineUsers'
END
WHERE id IN (1, 2, 12, 13, 23, 29, 30, 36, 42, 46, 51) AND type <> 'button';

-- Any other directory or menu that exists by now (added through the API or by the migrations
-- numbered below this one) gets a name that is unique by construction: 'Menu' and its id.
UPDATE menus SET name = 'Menu' || id WHERE name IS NULL AND type <> 'button';
