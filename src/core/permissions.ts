/**
 * The permission codes of every built-in operation, grouped the way migrations/0001 seeds them as
 * menus: one directory per module, one menu per page, one button per code. Routes declare one of
 * these codes; a test checks that each declared code is seeded.
 */
export const PERMISSION_CODES = [
  'sys:user:page', 'sys:user:detail', 'sys:user:add', 'sys:user:edit', 'sys:user:delete',
  'sys:user:changeStatus', 'sys:user:resetPassword', 'sys:user:grantRole', 'sys:user:ownRole', 'sys:user:resetMfa',
  'sys:role:page', 'sys:role:list', 'sys:role:detail', 'sys:role:add', 'sys:role:edit', 'sys:role:delete',
  'sys:role:changeStatus', 'sys:role:grantMenu', 'sys:role:ownMenu', 'sys:role:grantDataScope', 'sys:role:requireMfa',
  'sys:org:tree', 'sys:org:detail', 'sys:org:add', 'sys:org:edit', 'sys:org:delete',
  'sys:menu:tree', 'sys:menu:detail', 'sys:menu:add', 'sys:menu:edit', 'sys:menu:delete',
  'sys:file:upload', 'sys:file:page', 'sys:file:detail', 'sys:file:delete', 'sys:file:download',
  'sys:image:upload', 'sys:image:page', 'sys:image:detail', 'sys:image:delete', 'sys:image:preview',
  'sys:loginLog:page', 'sys:loginLog:delete', 'sys:loginLog:clear',
  'sys:opLog:page', 'sys:opLog:detail', 'sys:opLog:delete', 'sys:opLog:clear',
  'sys:online:page', 'sys:online:forceLogout',
  'sys:monitor:server', 'sys:monitor:cache',
  'sys:backup:page', 'sys:backup:create', 'sys:backup:download', 'sys:backup:delete',
  'sys:job:page', 'sys:job:detail', 'sys:job:edit', 'sys:job:changeStatus', 'sys:job:run',
  'sys:jobLog:page', 'sys:jobLog:delete', 'sys:jobLog:clear',
  // Standard modules (migrations 0020, 0021)
  'sys:dictType:page', 'sys:dictType:detail', 'sys:dictType:add', 'sys:dictType:edit', 'sys:dictType:delete',
  'sys:dictData:page', 'sys:dictData:detail', 'sys:dictData:add', 'sys:dictData:edit', 'sys:dictData:delete',
  'sys:config:page', 'sys:config:detail', 'sys:config:add', 'sys:config:edit', 'sys:config:delete',
  'sys:notice:page', 'sys:notice:detail', 'sys:notice:add', 'sys:notice:edit', 'sys:notice:delete',
  'sys:post:page', 'sys:post:list', 'sys:post:detail', 'sys:post:add', 'sys:post:edit', 'sys:post:delete',
  // API keys (migration 0026): page and revoke reach other users' keys; one's own need no code.
  'sys:apiKey:page', 'sys:apiKey:add', 'sys:apiKey:revoke',
  // Export and import (migration 0024)
  'sys:user:export', 'sys:user:import', 'sys:role:export', 'sys:post:export', 'sys:dictType:export', 'sys:dictData:export',
  'sys:config:export', 'sys:notice:export', 'sys:loginLog:export', 'sys:opLog:export', 'sys:online:export', 'sys:job:export',
  'sys:jobLog:export',
] as const;

export type PermissionCode = (typeof PERMISSION_CODES)[number];

/** The built-in role that passes every permission check. */
export const SUPER_ADMIN_ROLE = 'superAdmin';

/** `module:resource:action`, each part a letter followed by letters or digits. */
export const PERMISSION_FORMAT = /^[a-z][A-Za-z0-9]*:[a-z][A-Za-z0-9]*:[a-z][A-Za-z0-9]*$/;
