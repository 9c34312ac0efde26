/**
 * RuoYi's permission strings ↔ ours, one table for both ways (docs/ruoyi.md, "Permission codes").
 * getInfo sends the caller's codes in RuoYi's spelling (its buttons check them: v-hasPermi), the
 * menu page shows and saves a button's code in RuoYi's spelling, and our guards keep checking
 * ours. A code with no pair passes through unchanged both ways (ours such as
 * sys:user:changeStatus, which RuoYi folds into :edit, show as they are).
 *
 * Several of ours fold into one of RuoYi's for the buttons RuoYi shows: a user who holds
 * sys:user:grantRole sees RuoYi's 分配角色 button only with system:user:edit, as in RuoYi.
 */
const PAIRS: readonly (readonly [ruoyi: string, ours: string])[] = [
  // 用户管理
  ['system:user:list', 'sys:user:page'],
  ['system:user:query', 'sys:user:detail'],
  ['system:user:add', 'sys:user:add'],
  ['system:user:edit', 'sys:user:edit'],
  ['system:user:remove', 'sys:user:delete'],
  ['system:user:resetPwd', 'sys:user:resetPassword'],
  ['system:user:export', 'sys:user:export'],
  ['system:user:import', 'sys:user:import'],
  // 角色管理
  ['system:role:list', 'sys:role:page'],
  ['system:role:query', 'sys:role:detail'],
  ['system:role:add', 'sys:role:add'],
  ['system:role:edit', 'sys:role:edit'],
  ['system:role:remove', 'sys:role:delete'],
  ['system:role:export', 'sys:role:export'],
  // 菜单管理
  ['system:menu:list', 'sys:menu:tree'],
  ['system:menu:query', 'sys:menu:detail'],
  ['system:menu:add', 'sys:menu:add'],
  ['system:menu:edit', 'sys:menu:edit'],
  ['system:menu:remove', 'sys:menu:delete'],
  // 部门管理 (our organisations)
  ['system:dept:list', 'sys:org:tree'],
  ['system:dept:query', 'sys:org:detail'],
  ['system:dept:add', 'sys:org:add'],
  ['system:dept:edit', 'sys:org:edit'],
  ['system:dept:remove', 'sys:org:delete'],
  // 岗位, 字典 (RuoYi's dictionary codes cover types and items; ours are sys:dictType and
  // sys:dictData: the pair is the types', item codes pass unchanged), 参数, 通知
  ['system:post:list', 'sys:post:page'],
  ['system:post:query', 'sys:post:detail'],
  ['system:post:add', 'sys:post:add'],
  ['system:post:edit', 'sys:post:edit'],
  ['system:post:remove', 'sys:post:delete'],
  ['system:post:export', 'sys:post:export'],
  ['system:dict:list', 'sys:dictType:page'],
  ['system:dict:query', 'sys:dictType:detail'],
  ['system:dict:add', 'sys:dictType:add'],
  ['system:dict:edit', 'sys:dictType:edit'],
  ['system:dict:remove', 'sys:dictType:delete'],
  ['system:dict:export', 'sys:dictType:export'],
  ['system:config:list', 'sys:config:page'],
  ['system:config:query', 'sys:config:detail'],
  ['system:config:add', 'sys:config:add'],
  ['system:config:edit', 'sys:config:edit'],
  ['system:config:remove', 'sys:config:delete'],
  ['system:config:export', 'sys:config:export'],
  ['system:notice:list', 'sys:notice:page'],
  ['system:notice:query', 'sys:notice:detail'],
  ['system:notice:add', 'sys:notice:add'],
  ['system:notice:edit', 'sys:notice:edit'],
  ['system:notice:remove', 'sys:notice:delete'],
  // 日志管理
  ['monitor:logininfor:list', 'sys:loginLog:page'],
  ['monitor:logininfor:remove', 'sys:loginLog:delete'],
  ['monitor:logininfor:export', 'sys:loginLog:export'],
  ['monitor:operlog:list', 'sys:opLog:page'],
  ['monitor:operlog:query', 'sys:opLog:detail'],
  ['monitor:operlog:remove', 'sys:opLog:delete'],
  ['monitor:operlog:export', 'sys:opLog:export'],
  // 系统监控
  ['monitor:online:list', 'sys:online:page'],
  ['monitor:online:forceLogout', 'sys:online:forceLogout'],
  ['monitor:server:list', 'sys:monitor:server'],
  ['monitor:cache:list', 'sys:monitor:cache'],
  ['monitor:job:list', 'sys:job:page'],
  ['monitor:job:query', 'sys:job:detail'],
  ['monitor:job:edit', 'sys:job:edit'],
  // RuoYi's job log page deletes and cleans with monitor:job:remove (its job page's delete is
  // not offered here: the jobs are the service's own); run now is sys:job:run, unpaired (RuoYi
  // shows its button to monitor:job:changeStatus).
  ['monitor:job:remove', 'sys:jobLog:delete'],
  ['monitor:job:changeStatus', 'sys:job:changeStatus'],
  ['monitor:job:export', 'sys:job:export'],
];

const toRuoyi = new Map(PAIRS.map(([r, o]) => [o, r]));
const toOurs = new Map(PAIRS.map(([r, o]) => [r, o]));

/** RuoYi's "every permission" (ours: `*`, a super admin). */
export const ALL_RUOYI = '*:*:*';

/** One of our codes in RuoYi's spelling (unpaired codes unchanged; `*` → `*:*:*`). */
export function ruoyiCode(ours: string): string {
  if (ours === '*') return ALL_RUOYI;
  return toRuoyi.get(ours) ?? ours;
}

/** One RuoYi code in our spelling (unpaired codes unchanged; `*:*:*` → `*`). */
export function ourCode(ruoyi: string): string {
  if (ruoyi === ALL_RUOYI) return '*';
  return toOurs.get(ruoyi) ?? ruoyi;
}

/** The caller's codes as getInfo sends them: RuoYi's spelling, each once, sorted. */
export function ruoyiCodes(ours: readonly string[]): string[] {
  return [...new Set(ours.map(ruoyiCode))].sort();
}

/** The pairs, for tests and the docs. */
export const CODE_PAIRS = PAIRS;
