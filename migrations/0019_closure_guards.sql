-- Guard rules of issue 26, "delegation closed on every path" (contract: "Delegation: who may act
-- on whom"), checked inside atomic writes (mechanism: 0002_guard_failures.sql). Each guard is
-- placed BEFORE the writes of its batch, so it judges the caller as they stand before the change:
-- a write can never be judged by the powers it is about to give. A table of its own, so no
-- earlier guard table is recreated for it.
CREATE TABLE delegation_guard_failures (
  rule TEXT NOT NULL,
  -- "Nobody widens themselves": a role would get a data scope wider than the caller's current one.
  CONSTRAINT guard_widens_scope CHECK (rule <> 'widens_scope'),
  -- "A role belongs to its holders": a user holding the role is outside the caller's data scope.
  CONSTRAINT guard_role_held_outside CHECK (rule <> 'role_held_outside'),
  -- "Menus carry codes": the menu carries a permission code the caller does not hold (a disabled
  -- menu's code is held by nobody).
  CONSTRAINT guard_menu_code_not_held CHECK (rule <> 'menu_code_not_held'),
  -- A field that does another operation's job, sent without that operation's code.
  CONSTRAINT guard_code_required CHECK (rule <> 'code_required'),
  -- A caller who is not a super admin gives themselves a role or moves themselves.
  CONSTRAINT guard_self_grant CHECK (rule <> 'self_grant'),
  -- "Backups hold every row": the caller's data scope is not `all`.
  CONSTRAINT guard_scope_all_only CHECK (rule <> 'scope_all_only'),
  CONSTRAINT delegation_guard_unknown_rule CHECK (rule IN ('widens_scope', 'role_held_outside', 'menu_code_not_held', 'code_required', 'self_grant', 'scope_all_only'))
);
