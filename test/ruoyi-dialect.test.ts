import { beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { applyRuoyiMenuPreset, ruoyiMenuPresetSql } from '../src/compat/ruoyi/index.ts';
import { ALL_RUOYI, CODE_PAIRS, ourCode, ruoyiCode, ruoyiCodes } from '../src/compat/ruoyi/codes.ts';
import { changedFrom, fromRuoyiStatus, idListOf, pageOf, ruoyiTime, toRuoyiStatus } from '../src/compat/ruoyi/values.ts';
import { fullyCheckedKeys, topmostFullyChecked, withDescendants } from '../src/compat/ruoyi/trees.ts';
import { ruoyiCode as answerCode } from '../src/compat/ruoyi/respond.ts';
import { generatedOrgCode } from '../src/compat/ruoyi/dept.ts';
import { ruoyiRoutes } from '../src/compat/ruoyi/routers.ts';
import { EXPORTS } from '../src/compat/ruoyi/excel.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { xlsxStream } from '../src/core/xlsx-write.ts';
import { XLSX_TYPE } from '../src/modules/export/index.ts';
import { delegationWorld } from './support/delegation-world.ts';
import { cronOfQuartz, quartzOf } from '../src/compat/ruoyi/job.ts';
import { DICT_VALUES, ourDictValue, ruoyiDictValue } from '../src/compat/ruoyi/values.ts';
import { answerHash } from '../src/modules/auth/captcha.service.ts';
import { userWithTotp } from './support/mfa.ts';
import { SECOND_FACTOR_ELSEWHERE } from '../src/compat/ruoyi/login.ts';

// The RuoYi dialect (src/compat/ruoyi, docs/ruoyi.md) without the browser: its value mappings as
// units, and its answers through HTTP on Bun and on a real D1 — shapes RuoYi-Vue3 reads (HTTP 200,
// `code` in the body, {total, rows}, flat trees, '0'/'1', numeric ids), and that the rules behind
// them are ours (scope, containment, op log, optimistic locking).

const PREFIX = '/ruoyi';
const PASSWORD = 'Dialect-Pass-42';

describe('mappings', () => {
  test('status strings both ways; anything else is refused', () => {
    expect(toRuoyiStatus('enabled')).toBe('0');
    expect(toRuoyiStatus('disabled')).toBe('1');
    expect(fromRuoyiStatus('0')).toBe('enabled');
    expect(fromRuoyiStatus('1')).toBe('disabled');
    expect(() => fromRuoyiStatus('enabled')).toThrow(/must be '0'/);
    expect(() => fromRuoyiStatus(undefined)).toThrow();
  });

  test('ids: comma lists from paths, numbers only', () => {
    expect(idListOf('3,4,3')).toEqual([3, 4]);
    expect(idListOf('7')).toEqual([7]);
    expect(() => idListOf('3,x')).toThrow(/positive integer/);
    expect(() => idListOf('0')).toThrow();
    expect(() => idListOf('1'.repeat(17))).toThrow();
  });

  test('pages: pageNum/pageSize and the date range; times printed the RuoYi way', () => {
    expect(pageOf({ pageNum: '3', pageSize: '20', 'params[beginTime]': '2026-01-01', 'params[endTime]': '2026-01-31' }, 100)).toEqual({
      pageNo: 3,
      pageSize: 20,
      range: { createdFrom: '2026-01-01', createdTo: '2026-01-31' },
    });
    expect(pageOf({}, 100)).toEqual({ pageNo: 1, pageSize: 10, range: {} });
    expect(pageOf({ pageSize: '500' }, 100).pageSize).toBe(100);
    expect(() => pageOf({ pageNum: '-1' })).toThrow(/pageNum/);
    expect(ruoyiTime('2026-11-22T02:07:13.123Z')).toBe('2026-11-22 02:07:13');
    expect(ruoyiTime(null)).toBeNull();
  });

  test('echoed edits: only the fields that differ from the stored record; null and "" are both none', () => {
    expect(changedFrom({ nickName: 'A', email: null, remark: '', orgId: 3 }, { nickName: 'A', email: '', remark: null, orgId: 4, phone: '1' })).toEqual({ orgId: 3 });
    expect(changedFrom({ email: 'a@b.c' }, { email: null })).toEqual({ email: 'a@b.c' });
    expect(changedFrom({ remark: null }, { remark: 'x' })).toEqual({ remark: null });
  });

  test('codes: one table both ways, *:*:* for everything, unpaired codes pass through', () => {
    expect(ruoyiCode('sys:user:add')).toBe('system:user:add');
    expect(ourCode('system:user:add')).toBe('sys:user:add');
    expect(ruoyiCode('sys:org:tree')).toBe('system:dept:list');
    expect(ourCode('monitor:online:forceLogout')).toBe('sys:online:forceLogout');
    expect(ruoyiCode('*')).toBe(ALL_RUOYI);
    expect(ourCode(ALL_RUOYI)).toBe('*');
    expect(ruoyiCode('sys:user:changeStatus')).toBe('sys:user:changeStatus');
    expect(ruoyiCodes(['sys:user:page', 'sys:user:page', 'sys:role:add'])).toEqual(['system:role:add', 'system:user:list']);
    // Each side appears once: the table is a bijection.
    expect(new Set(CODE_PAIRS.map(([r]) => r)).size).toBe(CODE_PAIRS.length);
    expect(new Set(CODE_PAIRS.map(([, o]) => o)).size).toBe(CODE_PAIRS.length);
    for (const [r, o] of CODE_PAIRS) expect([ruoyiCode(o), ourCode(r)]).toEqual([r, o]);
  });

  test('dictionary values: one table both ways per type, unmapped values unchanged', () => {
    for (const [type, pairs] of Object.entries(DICT_VALUES)) {
      expect(new Set(pairs.map(([r]) => r)).size).toBe(pairs.length);
      expect(new Set(pairs.map(([, o]) => o)).size).toBe(pairs.length);
      for (const [r, o] of pairs) expect([ruoyiDictValue(type, o), ourDictValue(type, r)]).toEqual([r, o]);
    }
    expect(ruoyiDictValue('sys_notice_status', 'draft')).toBe('draft');
    expect(ourDictValue('sys_yes_no', 'Y')).toBe('true');
    expect(ruoyiDictValue('my_own_type', 'enabled')).toBe('enabled');
  });

  test('cron: Quartz (seconds, ?, days 1 = SUN, a/n) to our 5 fields and back', () => {
    expect(cronOfQuartz('0 0/5 * * * ?')).toBe('0-59/5 * * * *');
    expect(cronOfQuartz('0 0 3 ? * 2-6')).toBe('0 3 * * MON-FRI');
    expect(cronOfQuartz('0 0 12 1/2 * ? *')).toBe('0 12 1-31/2 * *');
    expect(cronOfQuartz('*/10 * * * *')).toBe('*/10 * * * *');
    expect(quartzOf('*/10 * * * *')).toBe('0 */10 * * * ?');
    expect(quartzOf('0 3 * * 0')).toBe('0 0 3 ? * SUN');
    expect(quartzOf('0 3 1 * *')).toBe('0 0 3 1 * ?');
    for (const ours of ['*/10 * * * *', '0 3 * * MON-FRI', '15 2 1 JAN *']) expect(cronOfQuartz(quartzOf(ours))).toBe(ours);
    expect(() => cronOfQuartz('30 * * * * ?')).toThrow(/second must be 0/);
    expect(() => cronOfQuartz('0 0 3 ? * 0')).toThrow(/1 \(SUN\) to 7/);
    expect(() => cronOfQuartz('0 0 3 * * ? 2030')).toThrow(/year/);
    expect(() => cronOfQuartz('0 3 * *')).toThrow(/6 or 7 fields/);
  });

  test('trees: linked pickers get fully checked keys; saved dept lists become topmost scope orgs', () => {
    const forest = [{ id: 1, children: [{ id: 2, children: [] }, { id: 3, children: [{ id: 4, children: [] }] }] }, { id: 5, children: [] }];
    expect(fullyCheckedKeys(forest, new Set([1, 2, 3]))).toEqual([2]); // 4 not granted: 3 and 1 stay half
    expect(fullyCheckedKeys(forest, new Set([1, 2, 3, 4, 5])).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(topmostFullyChecked(forest, new Set([1, 3, 4]))).toEqual([3]); // 1 only half-checked
    expect(topmostFullyChecked(forest, new Set([1, 2, 3, 4]))).toEqual([1]);
    expect(withDescendants(forest, new Set([3]))).toEqual([3, 4]);
  });

  test('answer codes: 401 stays, 501 stays, every other refusal is 500 with our message', () => {
    expect([400, 401, 403, 404, 409, 429, 500, 501, 503].map(answerCode)).toEqual([500, 401, 500, 500, 500, 500, 500, 501, 500]);
    expect(generatedOrgCode('0a1b2c3d-4e5f-6789-abcd-ef0123456789')).toBe('D0A1B2C3D4E5F');
  });

  test('routes: Layout at the top, ParentView below, relative child paths', () => {
    const menu = (id: number, type: 'directory' | 'menu', path: string, children: any[] = [], component: string | null = null) =>
      ({ id, parentId: 0, title: `T${id}`, type, path, component, icon: null, sort: 0, hidden: false, name: `N${id}`, keepAlive: true, children }) as const;
    const out = ruoyiRoutes([menu(1, 'directory', '/system', [menu(2, 'menu', 'user', [], 'system/user/index'), menu(3, 'directory', 'log', [menu(4, 'menu', 'operlog', [], 'monitor/operlog/index')])])]);
    expect(out[0]).toMatchObject({ name: 'N1', path: '/system', component: 'Layout', alwaysShow: true, redirect: 'noRedirect', meta: { title: 'T1', icon: '#', noCache: false } });
    expect(out[0]!.children![0]).toMatchObject({ path: 'user', component: 'system/user/index' });
    expect(out[0]!.children![1]).toMatchObject({ path: 'log', component: 'ParentView' });
    expect(ruoyiMenuPresetSql()).toContain("'system/user/index'");
    // A menu named like one of the client's own routes (our seeded job log page is 'JobLog', as is
    // RuoYi's) would replace it: its route gets its id appended.
    expect(ruoyiRoutes([{ ...menu(7, 'menu', '/job-log', [], 'x'), name: 'JobLog' }])[0]!.name).toBe('JobLog7Root');
  });
});

for (const runtime of RUNTIMES) {
  describe(`dialect on ${runtime}`, () => {
    let t: AnyTestApp;
    let admin: string;

    /** A RuoYi call: HTTP status, the body, and the round trips (Server-Timing). */
    async function rc(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
      const headers: Record<string, string> = {};
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['content-type'] = 'application/json;charset=utf-8';
      const res = await t.request(PREFIX + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
      const json = (await res.json()) as any;
      const rt = Number(res.headers.get('server-timing')?.match(/desc="(\d+) rt/)?.[1] ?? NaN);
      return { status: res.status, json, rt };
    }
    /** A call that must succeed (code 200). */
    async function ok(method: string, path: string, opts: { token?: string; body?: unknown } = {}) {
      const r = await rc(method, path, opts);
      if (r.status !== 200 || r.json.code !== 200) {
        const log = t.logLines.filter((l) => r.json.traceId && l.includes(r.json.traceId)).join('\n');
        throw new Error(`${method} ${path}: HTTP ${r.status} ${JSON.stringify(r.json)} ${log}`);
      }
      return r;
    }
    async function login(username: string, password: string) {
      return (await ok('POST', '/login', { body: { username, password } })).json.token as string;
    }

    beforeAll(async () => {
      t = await makeTestApp({ runtime, env: { RUOYI_API_PREFIX: PREFIX } });
      await applyRuoyiMenuPreset(t.deps);
      admin = await login('admin', ADMIN_PASSWORD);
    }, D1_START_MS);

    test('login of an account with a second factor: refused in words (no second step in RuoYi), never a null token, no session', async () => {
      const name = `mfa_ry_${runtime}`;
      const password = 'Second-Factor-Ry-9';
      await userWithTotp(t, admin, name, password);
      const sessions = await t.count('sessions');
      const r = await rc('POST', '/login', { body: { username: name, password } });
      expect(r.status).toBe(200);
      expect(r.json.code).not.toBe(200);
      expect(r.json.token).toBeUndefined();
      expect(r.json.msg).toBe(SECOND_FACTOR_ELSEWHERE);
      expect(await t.count('sessions')).toBe(sessions);
    });

    test('login: HTTP 200 always, failures are code 500 (never 401), the token at the top level', async () => {
      const cap = await ok('GET', '/captchaImage');
      expect(cap.json).toMatchObject({ code: 200, captchaEnabled: false });
      const bad = await rc('POST', '/login', { body: { username: 'admin', password: 'wrong-password-1', code: '', uuid: '' } });
      expect(bad.status).toBe(200);
      expect(bad.json).toMatchObject({ code: 500, msg: 'Invalid login name or password' });
      const empty = await rc('POST', '/login', { body: { password: 'x' } });
      expect(empty.json.code).toBe(500);
      expect(empty.json.msg).toMatch(/^username/);
      expect(typeof admin).toBe('string');
      // Both attempts are in our login log like any other.
      expect((await t.rows(`SELECT status FROM login_log WHERE login_name = 'admin' ORDER BY id`)).map((r) => r.status)).toContain('failure');
    });

    test('session: no token is code 401 in an HTTP 200; logout answers 200 even for a dead token', async () => {
      const none = await rc('GET', '/getInfo');
      expect([none.status, none.json.code]).toEqual([200, 401]);
      const token = await login('admin', ADMIN_PASSWORD);
      expect((await ok('POST', '/logout', { token })).json.code).toBe(200);
      expect((await rc('GET', '/getInfo', { token })).json.code).toBe(401);
      expect((await ok('POST', '/logout', { token })).json.code).toBe(200);
      expect((await ok('POST', '/logout', { token: 'not.a.token.at-all' })).json.code).toBe(200);
    });

    test('getInfo and getRouters: RuoYi codes, role keys, the preset sidebar with RuoYi views', async () => {
      const info = await ok('GET', '/getInfo', { token: admin });
      expect(info.json.user).toMatchObject({ userId: 1, userName: 'admin', status: '0', admin: true });
      expect(info.json.roles).toEqual(['admin']);
      expect(info.json.permissions).toEqual(['*:*:*']);
      const routes = (await ok('GET', '/getRouters', { token: admin })).json.data as any[];
      const system = routes.find((r) => r.path === '/system');
      expect(system).toMatchObject({ name: 'System', component: 'Layout', meta: { title: '系统管理' } });
      // Hidden routes (our pages RuoYi has no view for) stay out of the sidebar.
      expect(system.children.filter((c: any) => c.hidden).map((c: any) => c.meta.title).sort()).toEqual(['API keys', 'Backups', 'Dictionary items', 'Files', 'Images', 'Job log']);
      system.children = system.children.filter((c: any) => !c.hidden);
      expect(system.children.map((c: any) => [c.name, c.path, c.component])).toEqual([
        ['User', 'user', 'system/user/index'],
        ['Role', 'role', 'system/role/index'],
        ['Menu', 'menu', 'system/menu/index'],
        ['Dept', 'dept', 'system/dept/index'],
        ['Post', 'post', 'system/post/index'],
        ['Dict', 'dict', 'system/dict/index'],
        ['Config', 'config', 'system/config/index'],
        ['Notice', 'notice', 'system/notice/index'],
        ['Log', 'log', 'ParentView'],
      ]);
      expect(system.children[8].children.map((c: any) => c.component)).toEqual(['monitor/operlog/index', 'monitor/logininfor/index']);
      const monitor = routes.find((r) => r.path === '/monitor');
      expect(monitor.children.map((c: any) => c.component)).toEqual(['monitor/online/index', 'monitor/job/index', 'monitor/server/index', 'monitor/cache/index', 'monitor/cache/list']);
      expect(routes.filter((r) => !r.hidden).map((r) => r.path)).toEqual(['/system', '/monitor']);
      if (runtime === 'd1') expect(info.rt).toBe(1);
    });

    test('users: {total, rows}, numeric ids, status strings, the echoed edit keeps optimistic locking', async () => {
      const org = await t.call('POST', '/app/sysOrg/add', { token: admin, body: { name: 'Sales', code: `sales-${runtime}` } });
      const deptId = org.data.id as number;
      await ok('POST', '/system/user', { token: admin, body: { deptId, userName: 'ry_alice', nickName: 'Alice', password: PASSWORD, phonenumber: '', email: '', sex: '1', status: '0', remark: '', postIds: [], roleIds: [] } });
      const list = await ok('GET', `/system/user/list?pageNum=1&pageSize=10&userName=ry_al&deptId=${deptId}`, { token: admin });
      expect(list.json).toMatchObject({ code: 200, total: 1 });
      expect(list.json.data).toBeUndefined();
      const alice = list.json.rows[0];
      expect(alice).toMatchObject({ userName: 'ry_alice', nickName: 'Alice', status: '0', deptId, dept: { deptName: 'Sales' } });
      expect(typeof alice.userId).toBe('number');
      if (runtime === 'd1') expect(list.rt).toBe(1);

      const form = (await ok('GET', `/system/user/${alice.userId}`, { token: admin })).json;
      expect(form.roles.some((r: any) => r.roleKey === 'admin')).toBe(true);
      expect(form.roleIds).toEqual([]);
      // The whole object comes back, unknown fields and password "" included.
      const echoed = { ...form.data, nickName: 'Alice B', password: '', postIds: [], roleIds: [] };
      await ok('PUT', '/system/user', { token: admin, body: echoed });
      const stale = await rc('PUT', '/system/user', { token: admin, body: { ...echoed, nickName: 'Alice C' } });
      expect(stale.json.code).toBe(500);
      expect(stale.json.msg).toMatch(/version/);
      expect((await t.row(`SELECT nick_name FROM users WHERE id = ?`, alice.userId))!.nick_name).toBe('Alice B');

      await ok('PUT', '/system/user/changeStatus', { token: admin, body: { userId: alice.userId, status: '1' } });
      expect((await t.row(`SELECT status FROM users WHERE id = ?`, alice.userId))!.status).toBe('disabled');
      const badStatus = await rc('PUT', '/system/user/changeStatus', { token: admin, body: { userId: alice.userId, status: 'disabled' } });
      expect(badStatus.json).toMatchObject({ code: 500, msg: "status: must be '0' (normal) or '1' (disabled)" });

      // The op log names our module and action, with the HTTP status our API would have given.
      const ops = await t.rows(`SELECT module, action, status FROM op_log WHERE path LIKE '/ruoyi/system/user%' ORDER BY id`);
      expect(ops.map((o) => `${o.module}.${o.action}:${o.status}`)).toEqual(['sysUser.add:200', 'sysUser.edit:200', 'sysUser.edit:409', 'sysUser.changeStatus:200', 'sysUser.changeStatus:400']);

      const bob = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'ry_bob', password: PASSWORD } });
      await ok('DELETE', `/system/user/${alice.userId},${bob.data.id}`, { token: admin });
      expect(await t.row(`SELECT id FROM users WHERE login_name IN ('ry_alice', 'ry_bob')`)).toBeNull();
    });

    test('roles: menus granted with the role, linked-tree keys, data scope 1-5', async () => {
      const userMenus = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN ('sys:user:page', 'sys:user:detail')`)).map((r) => r.id);
      const page = (await t.row<{ id: number }>(`SELECT parent_id AS id FROM menus WHERE permission = 'sys:user:page'`))!.id;
      await ok('POST', '/system/role', { token: admin, body: { roleName: 'Viewer', roleKey: `viewer_${runtime}`, roleSort: 3, status: '0', menuIds: [page, ...userMenus], deptIds: [], menuCheckStrictly: true, deptCheckStrictly: true, remark: '' } });
      const list = await ok('GET', `/system/role/list?pageNum=1&pageSize=10&roleKey=viewer_${runtime}`, { token: admin });
      const role = list.json.rows[0];
      expect(role).toMatchObject({ roleName: 'Viewer', roleSort: 3, status: '0', dataScope: '5' });
      const tree = await ok('GET', `/system/menu/roleMenuTreeselect/${role.roleId}`, { token: admin });
      // The page has more buttons than the two granted: only the buttons are fully checked.
      expect(tree.json.checkedKeys.sort()).toEqual([...userMenus].sort());
      expect(tree.json.menus[0]).toHaveProperty('label');

      const detail = (await ok('GET', `/system/role/${role.roleId}`, { token: admin })).json.data;
      await ok('PUT', '/system/role/dataScope', { token: admin, body: { ...detail, dataScope: '4', deptIds: [] } });
      expect((await t.row(`SELECT data_scope FROM roles WHERE id = ?`, role.roleId))!.data_scope).toBe('orgAndBelow');
      await ok('PUT', '/system/role/changeStatus', { token: admin, body: { roleId: role.roleId, status: '1' } });
      const again = (await ok('GET', `/system/role/${role.roleId}`, { token: admin })).json.data;
      expect(again).toMatchObject({ status: '1', dataScope: '4' });
      await ok('DELETE', `/system/role/${role.roleId}`, { token: admin });
    });

    test('menus and depts: flat lists, RuoYi codes in perms, generated org codes', async () => {
      const menus = (await ok('GET', '/system/menu/list', { token: admin })).json.data as any[];
      const add = menus.find((m) => m.perms === 'system:user:add');
      expect(add).toMatchObject({ menuType: 'F', visible: '0', status: '0' });
      const userPage = menus.find((m) => m.component === 'system/user/index');
      await ok('POST', '/system/menu', { token: admin, body: { parentId: userPage.menuId, menuType: 'F', menuName: 'Export', orderNum: 50, perms: 'system:user:export', isFrame: '1', isCache: '0', visible: '0', status: '0' } });
      expect((await t.row(`SELECT permission FROM menus WHERE title = 'Export'`))!.permission).toBe('sys:user:export');

      await ok('POST', '/system/dept', { token: admin, body: { parentId: 0, deptName: 'HQ', orderNum: 1, leader: 'x', phone: '', email: '', status: '0' } });
      const hq = await t.row<{ id: number; code: string }>(`SELECT id, code FROM orgs WHERE name = 'HQ'`);
      expect(hq!.code).toMatch(/^D[0-9A-F]{12}$/);
      await ok('POST', '/system/dept', { token: admin, body: { parentId: hq!.id, deptName: 'HQ East', orderNum: 1, status: '0' } });
      const depts = (await ok('GET', '/system/dept/list', { token: admin })).json.data as any[];
      const east = depts.find((d) => d.deptName === 'HQ East');
      expect(east).toMatchObject({ parentId: hq!.id, ancestors: `0,${hq!.id}`, status: '0' });
      expect(depts.find((d) => d.deptId === hq!.id).parentId).toBe(0);
      const exclude = (await ok('GET', `/system/dept/list/exclude/${hq!.id}`, { token: admin })).json.data as any[];
      expect(exclude.some((d) => d.deptId === hq!.id || d.deptId === east.deptId)).toBe(false);
      const got = (await ok('GET', `/system/dept/${east.deptId}`, { token: admin })).json.data;
      await ok('PUT', '/system/dept', { token: admin, body: { ...got, deptName: 'HQ East 2', children: [] } });
      expect((await t.row(`SELECT name FROM orgs WHERE id = ?`, east.deptId))!.name).toBe('HQ East 2');
      // Our rule, not the dialect's: an org with children cannot be deleted.
      const refused = await rc('DELETE', `/system/dept/${hq!.id}`, { token: admin });
      expect(refused.json.code).toBe(500);
      expect(await t.row(`SELECT id FROM orgs WHERE id = ?`, hq!.id)).not.toBeNull();
    });

    test('a department manager (orgAndBelow) sees their departments and users only, and may not widen a role', async () => {
      const mk = async (name: string, code: string, parentId = 0) => (await t.call('POST', '/app/sysOrg/add', { token: admin, body: { name, code: `${code}-${runtime}`, parentId } })).data.id as number;
      const north = await mk('North', 'north');
      const northA = await mk('North A', 'north-a', north);
      const south = await mk('South', 'south');
      const codes = ['sys:user:page', 'sys:user:detail', 'sys:user:add', 'sys:user:edit', 'sys:user:ownRole', 'sys:role:list', 'sys:role:add', 'sys:org:tree', 'sys:org:detail', 'sys:org:edit', 'sys:online:page', 'sys:loginLog:page', 'sys:opLog:page', 'sys:role:page', 'sys:role:detail', 'sys:notice:page', 'sys:job:page', 'sys:job:detail', 'sys:job:edit'];
      const menuIds = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(codes))).map((r) => r.id);
      const role = (await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Manager', code: `mgr_${runtime}`, dataScope: 'orgAndBelow' } })).data.id;
      await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role, menuIds } });
      await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `mgr_${runtime}`, password: PASSWORD, orgId: north, roleIds: [role] } });
      await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `s_${runtime}`, password: PASSWORD, orgId: south } });
      await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `na_${runtime}`, password: PASSWORD, orgId: northA } });
      const mgr = await login(`mgr_${runtime}`, PASSWORD);

      const info = (await ok('GET', '/getInfo', { token: mgr })).json;
      expect(info.permissions).toContain('system:user:list');
      expect(info.permissions).not.toContain('*:*:*');
      const depts = (await ok('GET', '/system/dept/list', { token: mgr })).json.data as any[];
      expect(depts.map((d) => d.deptName).sort()).toEqual(['North', 'North A']);
      const users = (await ok('GET', '/system/user/list?pageNum=1&pageSize=50', { token: mgr })).json.rows as any[];
      expect(users.map((u) => u.userName).sort()).toEqual([`mgr_${runtime}`, `na_${runtime}`]);
      const routes = JSON.stringify((await ok('GET', '/getRouters', { token: mgr })).json.data);
      expect(routes).toContain('system/user/index');
      expect(routes).not.toContain('system/menu/index');

      // Our containment, through the dialect: a user outside their scope is refused with our message.
      const outside = await rc('POST', '/system/user', { token: mgr, body: { deptId: south, userName: `x_${runtime}`, nickName: 'X', password: PASSWORD, status: '0', roleIds: [] } });
      expect(outside.json.code).toBe(500);
      expect(await t.row(`SELECT id FROM users WHERE login_name = ?`, `x_${runtime}`)).toBeNull();
      // RuoYi's edit sends the whole user back, status and roles included: only what changed goes
      // into our edit, so a manager without sys:user:changeStatus or sys:user:grantRole may rename.
      const na = users.find((u) => u.userName === `na_${runtime}`);
      const form = (await ok('GET', `/system/user/${na.userId}`, { token: mgr })).json;
      await ok('PUT', '/system/user', { token: mgr, body: { ...form.data, nickName: 'Renamed', roleIds: form.roleIds, postIds: [] } });
      const flip = await rc('PUT', '/system/user', { token: mgr, body: { ...form.data, version: form.data.version + 1, status: '1', roleIds: form.roleIds } });
      expect(flip.json.msg).toMatch(/sys:user:changeStatus/);
      // Their own top department, echoed back with its parent (0, outside their scope): a rename
      // is not a move, so our move rule (the new parent in scope) does not apply.
      const top = (await ok('GET', `/system/dept/${north}`, { token: mgr })).json.data;
      await ok('PUT', '/system/dept', { token: mgr, body: { ...top, deptName: 'North HQ' } });
      expect((await t.row(`SELECT name FROM orgs WHERE id = ?`, north))!.name).toBe('North HQ');
      // A role with menus is one write under grantMenu's rules: without sys:role:grantMenu it is
      // refused whole, no role behind.
      const held = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission = 'sys:user:page'`)).map((r) => r.id);
      const withMenus = await rc('POST', '/system/role', { token: mgr, body: { roleName: 'Sub', roleKey: `sub_${runtime}`, roleSort: 1, status: '0', menuIds: held } });
      expect(withMenus.json.msg).toMatch(/sys:role:grantMenu/);
      expect(await t.row(`SELECT id FROM roles WHERE code = ?`, `sub_${runtime}`)).toBeNull();
      // With sys:role:grantMenu, a menu she does not hold is refused whole too (it once left the
      // role behind: the role and its menus were two writes).
      const grantMenu = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission = 'sys:role:grantMenu'`)).map((r) => r.id);
      await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role, menuIds: [...menuIds, ...grantMenu] } });
      const notHeld = (await t.row<{ id: number }>(`SELECT id FROM menus WHERE permission = 'sys:backup:download'`))!.id;
      const wider = await rc('POST', '/system/role', { token: mgr, body: { roleName: 'Sub', roleKey: `sub_${runtime}`, roleSort: 1, status: '0', menuIds: [...held, notHeld] } });
      expect([wider.json.code, wider.json.msg]).toEqual([500, expect.stringMatching(/hold yourself/)]);
      expect(await t.row(`SELECT id FROM roles WHERE code = ?`, `sub_${runtime}`)).toBeNull();
      await ok('POST', '/system/role', { token: mgr, body: { roleName: 'Sub', roleKey: `sub_${runtime}`, roleSort: 1, status: '0', menuIds: held } });
      const sub = (await t.row<{ id: number }>(`SELECT id FROM roles WHERE code = ?`, `sub_${runtime}`))!.id;
      expect((await t.rows<{ menu_id: number }>('SELECT menu_id FROM role_menu WHERE role_id = ?', sub)).map((r) => r.menu_id)).toEqual(held);
      // Notices go by their author's scope: the admin (no department) wrote them, out of sight.
      await t.call('POST', '/app/sysNotice/add', { token: admin, body: { title: `Admin's ${runtime}`, type: 'notice', status: 'published' } });
      expect((await ok('GET', '/system/notice/list?pageNum=1&pageSize=10', { token: mgr })).json.total).toBe(0);
      // ...but a published one is everyone's in the bell.
      expect((await ok('GET', '/system/notice/listTop', { token: mgr })).json.data.some((n: any) => n.noticeTitle === `Admin's ${runtime}`)).toBe(true);
      // The initial password is shown to who adds users (sys:user:add): this manager, not a plain user.
      expect((await ok('GET', '/system/config/configKey/sys.user.initPassword', { token: mgr })).json.code).toBe(200);
      const plain = await login(`na_${runtime}`, PASSWORD);
      const secret = await rc('GET', '/system/config/configKey/sys.user.initPassword', { token: plain });
      expect(secret.json.code).toBe(500);
      expect(secret.json.msg).toMatch(/sys:user:add or sys:config:detail/);
      // A job edit that flips the status needs sys:job:changeStatus too (our rule), nothing changed.
      const job = (await ok('GET', '/monitor/job/list?pageNum=1&pageSize=1', { token: mgr })).json.rows[0];
      const jobForm = (await ok('GET', `/monitor/job/${job.jobId}`, { token: mgr })).json.data;
      const flipJob = await rc('PUT', '/monitor/job', { token: mgr, body: { ...jobForm, status: '1' } });
      expect(flipJob.json.msg).toMatch(/sys:job:changeStatus/);
      expect((await t.row(`SELECT status FROM jobs WHERE id = ?`, job.jobId))!.status).toBe('enabled');
      // A code they lack: our 403, shown as code 500 with our message.
      const noCode = await rc('DELETE', '/monitor/operlog/clean', { token: mgr });
      expect(noCode.json).toMatchObject({ code: 500 });
      expect(noCode.json.msg).toMatch(/permission/i);
    });

    test('logs, online and monitors in RuoYi shapes', async () => {
      const ll = (await ok('GET', '/monitor/logininfor/list?pageNum=1&pageSize=10&orderByColumn=loginTime&isAsc=descending&status=1', { token: admin })).json;
      expect(ll.total).toBeGreaterThan(0);
      expect(ll.rows[0]).toMatchObject({ status: '1' });
      expect(ll.rows[0].loginTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const ol = (await ok('GET', '/monitor/operlog/list?pageNum=1&pageSize=10&businessType=1', { token: admin })).json;
      expect(ol.rows.every((r: any) => r.businessType === 1)).toBe(true);
      expect(ol.rows[0]).toHaveProperty('operParam');

      const other = await login('admin', ADMIN_PASSWORD);
      const online = (await ok('GET', '/monitor/online/list?userName=admin', { token: admin })).json;
      const mine = online.rows.find((r: any) => r.tokenId && r.userName === 'admin');
      expect(typeof mine.loginTime).toBe('number');
      const jti = (token: string) => JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
      expect(online.rows.some((r: any) => r.tokenId === jti(other))).toBe(true);
      await ok('DELETE', `/monitor/online/${jti(other)}`, { token: admin });
      expect((await t.row(`SELECT revoked_at FROM sessions WHERE id = ?`, jti(other)))!.revoked_at).not.toBeNull();
      expect((await rc('GET', '/getInfo', { token: other })).json.code).toBe(401);

      const server = (await ok('GET', '/monitor/server', { token: admin })).json.data;
      expect(server).toHaveProperty('cpu.cpuNum');
      expect(server).toHaveProperty('jvm.name');
      const cache = (await ok('GET', '/monitor/cache', { token: admin })).json.data;
      expect(cache.commandStats.map((s: any) => s.name)).toContain('menus');
    });

    test('dictionaries: RuoYi values on the seeded types (ours unchanged), types and items through our rules', async () => {
      const values = async (type: string) => (await ok('GET', `/system/dict/data/type/${type}`, { token: admin })).json.data.map((d: any) => d.dictValue);
      expect(await values('sys_normal_disable')).toEqual(['0', '1']);
      expect(await values('sys_yes_no')).toEqual(['Y', 'N']);
      expect(await values('sys_user_sex')).toEqual(['0', '1', '2']);
      expect(await values('sys_show_hide')).toEqual(['0', '1']);
      expect(await values('sys_notice_type')).toEqual(['1', '2']);
      expect(await values('sys_notice_status')).toEqual(['draft', '0', '1']);
      expect(await values('sys_common_status')).toEqual(['0', '1']);
      expect(await values('sys_job_status')).toEqual(['0', '1']);
      // The two whose values only the dialect makes: its own table.
      expect(await values('sys_job_group')).toEqual(['SYSTEM']);
      expect(await values('sys_oper_type')).toContain('9');
      expect(await values('no_such_type')).toEqual([]);
      // Our own API keeps our values.
      expect((await t.call('GET', '/app/sysDict/items?code=sys_normal_disable', { token: admin })).data.map((d: any) => d.value)).toEqual(['enabled', 'disabled']);

      const types = (await ok('GET', '/system/dict/type/list?pageNum=1&pageSize=10&dictType=sys_normal', { token: admin })).json;
      expect(types.rows[0]).toMatchObject({ dictType: 'sys_normal_disable', dictName: '系统开关', status: '0' });
      const code = `ry_color_${runtime}`;
      await ok('POST', '/system/dict/type', { token: admin, body: { dictName: 'Colour', dictType: code, status: '0', remark: '' } });
      const typeId = (await t.row<{ id: number }>(`SELECT id FROM dict_types WHERE code = ?`, code))!.id;
      expect((await ok('GET', `/system/dict/type/${typeId}`, { token: admin })).json.data).toMatchObject({ dictId: typeId, dictType: code });
      expect((await ok('GET', '/system/dict/type/optionselect', { token: admin })).json.data.some((o: any) => o.dictType === code)).toBe(true);
      await ok('POST', '/system/dict/data', { token: admin, body: { dictType: code, dictLabel: 'Red', dictValue: 'red', listClass: 'danger', cssClass: '', dictSort: 1, status: '0', isDefault: 'N', remark: '' } });
      const items = (await ok('GET', `/system/dict/data/list?pageNum=1&pageSize=10&dictType=${code}`, { token: admin })).json;
      expect(items.rows).toEqual([expect.objectContaining({ dictLabel: 'Red', dictValue: 'red', listClass: 'danger', isDefault: 'N', status: '0', dictType: code })]);
      const item = (await ok('GET', `/system/dict/data/${items.rows[0].dictCode}`, { token: admin })).json.data;
      await ok('PUT', '/system/dict/data', { token: admin, body: { ...item, dictLabel: 'Crimson' } });
      const stale = await rc('PUT', '/system/dict/data', { token: admin, body: { ...item, dictLabel: 'Scarlet' } });
      expect(stale.json.code).toBe(500);
      expect(stale.json.msg).toMatch(/^version/);
      expect((await t.row(`SELECT label FROM dict_data WHERE id = ?`, item.dictCode))!.label).toBe('Crimson');
      // RuoYi's '0' for sys_normal_disable is our 'enabled': already an item (our 409).
      const taken = await rc('POST', '/system/dict/data', { token: admin, body: { dictType: 'sys_normal_disable', dictLabel: 'On', dictValue: '0', listClass: 'default', dictSort: 9, status: '0' } });
      expect(taken.json).toMatchObject({ code: 500, msg: "value: 'enabled' is already an item of this dictionary type" });
      const bad = await rc('POST', '/system/dict/data', { token: admin, body: { dictType: code, dictLabel: 'X', dictValue: 'x', listClass: 'rainbow' } });
      expect(bad.json.code).toBe(500);
      expect(bad.json.msg).toMatch(/^tagType/);
      await ok('DELETE', `/system/dict/type/${typeId}`, { token: admin });
      expect(await t.row(`SELECT id FROM dict_data WHERE type_code = ?`, code)).toBeNull();
      expect((await ok('DELETE', '/system/dict/type/refreshCache', { token: admin })).json.code).toBe(200);
      const ops = await t.rows(`SELECT module, action, status FROM op_log WHERE path LIKE '/ruoyi/system/dict/%' ORDER BY id`);
      expect(ops.map((o) => `${o.module}.${o.action}:${o.status}`)).toEqual(['sysDictType.add:200', 'sysDictData.add:200', 'sysDictData.edit:200', 'sysDictData.edit:409', 'sysDictData.add:409', 'sysDictData.add:400', 'sysDictType.delete:200']);
    });

    test('parameters: the value in msg, Y/N types, built-in rules and secrets as ours', async () => {
      expect((await ok('GET', '/system/config/configKey/sys.user.initPassword', { token: admin })).json.msg).toBe('');
      const list = (await ok('GET', '/system/config/list?pageNum=1&pageSize=10&configType=Y', { token: admin })).json;
      expect(list.total).toBe(3);
      const init = list.rows.find((r: any) => r.configKey === 'sys.user.initPassword');
      expect(init).toMatchObject({ configType: 'Y', configValue: '' });
      // The initial password: set through RuoYi's form, read back in msg, never in the op log.
      const form = (await ok('GET', `/system/config/${init.configId}`, { token: admin })).json.data;
      await ok('PUT', '/system/config', { token: admin, body: { ...form, configValue: 'Init-Pass-42' } });
      expect((await ok('GET', '/system/config/configKey/sys.user.initPassword', { token: admin })).json.msg).toBe('Init-Pass-42');
      const logged = await t.row<{ params: string }>(`SELECT params FROM op_log WHERE path = '/ruoyi/system/config' ORDER BY id DESC LIMIT 1`);
      expect(logged!.params).not.toContain('Init-Pass-42');
      expect(logged!.params).toContain('[REDACTED]');
      // A built-in one keeps its key and type, and is not deleted (our rules, nothing changed).
      const again = (await ok('GET', `/system/config/${init.configId}`, { token: admin })).json.data;
      const rekey = await rc('PUT', '/system/config', { token: admin, body: { ...again, configKey: 'sys.user.other' } });
      expect(rekey.json.msg).toMatch(/^configType: set by the system.*keep their keys/);
      const rekeyN = await rc('PUT', '/system/config', { token: admin, body: { ...again, configKey: 'sys.user.other', configType: 'N' } });
      expect(rekeyN.json.msg).toMatch(/key of a built-in parameter/);
      const retype = await rc('PUT', '/system/config', { token: admin, body: { ...again, configType: 'N', configValue: 'Other-Pass-42' } });
      expect(retype.json.msg).toMatch(/^configType/);
      expect((await ok('DELETE', `/system/config/${init.configId}`, { token: admin }).catch((e) => e)).message).toMatch(/built-in parameter/);
      expect((await t.row(`SELECT config_value FROM configs WHERE id = ?`, init.configId))!.config_value).toBe('Init-Pass-42');
      // The captcha switch is read by RuoYi's captcha as by ours.
      const captcha = list.rows.find((r: any) => r.configKey === 'sys.account.captchaEnabled');
      const cform = (await ok('GET', `/system/config/${captcha.configId}`, { token: admin })).json.data;
      await ok('PUT', '/system/config', { token: admin, body: { ...cform, configValue: 'true' } });
      expect((await ok('GET', '/captchaImage')).json.captchaEnabled).toBe(true);
      await ok('PUT', '/system/config', { token: admin, body: { ...cform, version: cform.version + 1, configValue: '' } });
      expect((await ok('GET', '/captchaImage')).json.captchaEnabled).toBe(false);
      // A custom one: added as N, a type change refused, deleted.
      await ok('POST', '/system/config', { token: admin, body: { configName: 'Theme', configKey: `app.theme.${runtime}`, configValue: 'dark', configType: 'N', remark: '' } });
      const theme = (await ok('GET', `/system/config/list?pageNum=1&pageSize=10&configKey=app.theme.${runtime}`, { token: admin })).json.rows[0];
      expect(theme).toMatchObject({ configType: 'N', configValue: 'dark' });
      expect((await rc('PUT', '/system/config', { token: admin, body: { ...theme, configType: 'Y' } })).json.msg).toMatch(/^configType/);
      // RuoYi's add form starts at 'Y': a new parameter is custom all the same.
      await ok('POST', '/system/config', { token: admin, body: { configName: 'X', configKey: `app.x.${runtime}`, configValue: '', configType: 'Y' } });
      expect((await t.row(`SELECT type FROM configs WHERE config_key = ?`, `app.x.${runtime}`))!.type).toBe('custom');
      expect((await rc('POST', '/system/config', { token: admin, body: { configName: 'Z', configKey: `app.z.${runtime}`, configType: 'maybe' } })).json.msg).toMatch(/^configType/);
      expect(await t.row(`SELECT id FROM configs WHERE config_key = ?`, `app.z.${runtime}`)).toBeNull();
      await ok('DELETE', `/system/config/${theme.configId}`, { token: admin });
      expect(await t.row(`SELECT id FROM configs WHERE id = ?`, theme.configId)).toBeNull();
      await t.exec(`UPDATE configs SET config_value = '' WHERE config_key = 'sys.user.initPassword'`);
    });

    test('notices: types and states mapped, content sanitised, the bell and its read marks', async () => {
      await ok('POST', '/system/notice', { token: admin, body: { noticeTitle: `Hello ${runtime}`, noticeType: '2', noticeContent: '<p>Hi<script>alert(1)</script></p>', status: '0' } });
      const row = await t.row<any>(`SELECT id, type, status, content FROM notices WHERE title = ?`, `Hello ${runtime}`);
      expect(row).toMatchObject({ type: 'announcement', status: 'published', content: '<p>Hi</p>' });
      const logged = await t.row<{ params: string }>(`SELECT params FROM op_log WHERE path = '/ruoyi/system/notice' ORDER BY id DESC LIMIT 1`);
      expect(logged!.params).toContain('characters of HTML');
      const list = (await ok('GET', `/system/notice/list?pageNum=1&pageSize=10&noticeTitle=Hello&createBy=admin`, { token: admin })).json;
      expect(list.rows[0]).toMatchObject({ noticeId: row.id, noticeType: '2', status: '0', createBy: 'admin', noticeContent: '<p>Hi</p>' });
      expect((await ok('GET', `/system/notice/list?pageNum=1&pageSize=10&createBy=nobody`, { token: admin })).json.total).toBe(0);
      // A draft: RuoYi has no value for it, the dictionary's 草稿 item carries ours.
      await ok('POST', '/system/notice', { token: admin, body: { noticeTitle: `Draft ${runtime}`, noticeType: '1', noticeContent: '', status: 'draft' } });
      const draft = await t.row<any>(`SELECT id, status FROM notices WHERE title = ?`, `Draft ${runtime}`);
      expect(draft.status).toBe('draft');
      // The bell: published ones, read marks of the caller.
      const reader = (await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `reader_${runtime}`, password: PASSWORD } })).data.id;
      const token = await login(`reader_${runtime}`, PASSWORD);
      const top = (await ok('GET', '/system/notice/listTop', { token })).json;
      expect(top.data.find((n: any) => n.noticeId === row.id)).toMatchObject({ isRead: false, noticeType: '2' });
      expect(top.data.some((n: any) => n.noticeId === draft.id)).toBe(false);
      await ok('POST', `/system/notice/markRead?noticeId=${row.id}`, { token });
      expect((await ok('GET', '/system/notice/listTop', { token })).json.unreadCount).toBe(top.unreadCount - 1);
      await ok('POST', `/system/notice/markReadAll?ids=${row.id},${draft.id}`, { token });
      expect((await t.row(`SELECT count(*) AS n FROM notice_reads WHERE user_id = ?`, reader))!.n).toBe(1);
      // The header's detail is everyone's for a published notice; a draft needs sys:notice:detail.
      expect((await ok('GET', `/system/notice/${row.id}`, { token })).json.data.noticeTitle).toBe(`Hello ${runtime}`);
      const hidden = await rc('GET', `/system/notice/${draft.id}`, { token });
      expect(hidden.json.code).toBe(500);
      expect(hidden.json.msg).toMatch(/sys:notice:detail/);
      const form = (await ok('GET', `/system/notice/${draft.id}`, { token: admin })).json.data;
      await ok('PUT', '/system/notice', { token: admin, body: { ...form, status: '1', noticeTitle: `Closed ${runtime}` } });
      expect(await t.row(`SELECT status, title FROM notices WHERE id = ?`, draft.id)).toEqual({ status: 'closed', title: `Closed ${runtime}` });
      expect((await rc('GET', '/system/notice/readUsers/list?pageNum=1&noticeId=1', { token: admin })).json.code).toBe(501);
      await ok('DELETE', `/system/notice/${row.id},${draft.id}`, { token: admin });
      expect(await t.row(`SELECT id FROM notices WHERE id IN (?, ?)`, row.id, draft.id)).toBeNull();
    });

    test('posts: the page, the user form\'s picker and postIds, our delete rule', async () => {
      await ok('POST', '/system/post', { token: admin, body: { postCode: `ceo_${runtime}`, postName: 'CEO', postSort: 1, status: '0', remark: '' } });
      const post = (await ok('GET', `/system/post/list?pageNum=1&pageSize=10&postCode=ceo_${runtime}`, { token: admin })).json.rows[0];
      expect(post).toMatchObject({ postCode: `ceo_${runtime}`, postName: 'CEO', postSort: 1, status: '0' });
      const form = (await ok('GET', `/system/post/${post.postId}`, { token: admin })).json.data;
      await ok('PUT', '/system/post', { token: admin, body: { ...form, postName: 'Chief', status: '1' } });
      expect(await t.row(`SELECT name, status FROM posts WHERE id = ?`, post.postId)).toEqual({ name: 'Chief', status: 'disabled' });
      await ok('PUT', '/system/post', { token: admin, body: { ...form, version: form.version + 1, status: '0' } });
      // The user form lists the posts; a user holds one through RuoYi's form.
      const blank = (await ok('GET', '/system/user/', { token: admin })).json;
      expect(blank.posts.some((p: any) => p.postId === post.postId && p.status === '0')).toBe(true);
      await ok('POST', '/system/user', { token: admin, body: { userName: `poster_${runtime}`, nickName: 'P', password: PASSWORD, status: '0', postIds: [post.postId], roleIds: [] } });
      const uid = (await t.row<{ id: number }>(`SELECT id FROM users WHERE login_name = ?`, `poster_${runtime}`))!.id;
      const user = (await ok('GET', `/system/user/${uid}`, { token: admin })).json;
      expect(user.postIds).toEqual([post.postId]);
      // Our rule: a post held by a user is not deleted.
      const held = await rc('DELETE', `/system/post/${post.postId}`, { token: admin });
      expect(held.json.code).toBe(500);
      expect(await t.row(`SELECT id FROM posts WHERE id = ?`, post.postId)).not.toBeNull();
      await ok('PUT', '/system/user', { token: admin, body: { ...user.data, postIds: [], roleIds: [] } });
      await ok('DELETE', `/system/post/${post.postId}`, { token: admin });
      expect(await t.row(`SELECT id FROM posts WHERE id = ?`, post.postId)).toBeNull();
    });

    test('jobs: Quartz schedules both ways, registered jobs only, run now, the log by job name', async () => {
      const list = (await ok('GET', '/monitor/job/list?pageNum=1&pageSize=10', { token: admin })).json;
      const cleanup = list.rows.find((j: any) => j.invokeTarget === 'expiredCleanup');
      expect(cleanup).toMatchObject({ jobGroup: 'SYSTEM', cronExpression: '0 */10 * * * ?', status: '0', concurrent: '1', misfirePolicy: '2' });
      expect((await ok('GET', '/monitor/job/list?pageNum=1&pageSize=10&jobGroup=DEFAULT', { token: admin })).json.total).toBe(0);
      const form = (await ok('GET', `/monitor/job/${cleanup.jobId}`, { token: admin })).json.data;
      await ok('PUT', '/monitor/job', { token: admin, body: { ...form, cronExpression: '0 0/5 * * * ?', misfirePolicy: '3' } });
      expect(await t.row(`SELECT cron, misfire_policy FROM jobs WHERE id = ?`, cleanup.jobId)).toEqual({ cron: '0-59/5 * * * *', misfire_policy: 'skip' });
      const edited = (await ok('GET', `/monitor/job/${cleanup.jobId}`, { token: admin })).json.data;
      for (const [change, msg] of [[{ cronExpression: '30 * * * * ?' }, /second must be 0/], [{ jobName: 'Renamed' }, /^jobName/], [{ invokeTarget: 'rm -rf /' }, /^invokeTarget/], [{ misfirePolicy: '1' }, /^misfirePolicy/]] as const) {
        const r = await rc('PUT', '/monitor/job', { token: admin, body: { ...edited, ...change } });
        expect([r.json.code, r.json.msg]).toEqual([500, expect.stringMatching(msg)]);
      }
      expect((await t.row(`SELECT name, handler, cron FROM jobs WHERE id = ?`, cleanup.jobId))).toEqual({ name: cleanup.jobName, handler: 'expiredCleanup', cron: '0-59/5 * * * *' });
      await ok('PUT', '/monitor/job/changeStatus', { token: admin, body: { jobId: cleanup.jobId, status: '1' } });
      expect((await t.row(`SELECT status FROM jobs WHERE id = ?`, cleanup.jobId))!.status).toBe('disabled');
      await ok('PUT', '/monitor/job/changeStatus', { token: admin, body: { jobId: cleanup.jobId, status: '0' } });
      // Adding or deleting a job: documented 501, nothing stored.
      const add = await rc('POST', '/monitor/job', { token: admin, body: { jobName: 'x', jobGroup: 'DEFAULT', invokeTarget: 'ryTask.ryNoParams', cronExpression: '0 * * * * ?', misfirePolicy: '1', concurrent: '1', status: '0' } });
      expect([add.status, add.json.code]).toEqual([200, 501]);
      expect((await rc('DELETE', `/monitor/job/${cleanup.jobId}`, { token: admin })).json.code).toBe(501);
      expect((await t.row(`SELECT count(*) AS n FROM jobs`))!.n).toBe(4);
      // Run now, and its log row found by the job's name as RuoYi's log page asks.
      await ok('PUT', '/monitor/job/run', { token: admin, body: { jobId: cleanup.jobId, jobGroup: 'SYSTEM' } });
      const logs = (await ok('GET', `/monitor/jobLog/list?pageNum=1&pageSize=10&jobName=${encodeURIComponent(cleanup.jobName)}&jobGroup=SYSTEM`, { token: admin })).json;
      expect(logs.total).toBe(1);
      expect(logs.rows[0]).toMatchObject({ jobName: cleanup.jobName, jobGroup: 'SYSTEM', invokeTarget: 'expiredCleanup', status: '0' });
      expect(logs.rows[0].startTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect((await ok('GET', '/monitor/jobLog/list?pageNum=1&pageSize=10&jobName=nothing-like-it', { token: admin })).json.total).toBe(0);
      await ok('DELETE', `/monitor/jobLog/${logs.rows[0].jobLogId}`, { token: admin });
      expect(await t.row(`SELECT id FROM job_log WHERE id = ?`, logs.rows[0].jobLogId)).toBeNull();
      await ok('PUT', '/monitor/job/run', { token: admin, body: { jobId: cleanup.jobId } });
      await ok('DELETE', '/monitor/jobLog/clean', { token: admin });
      expect((await t.row(`SELECT count(*) AS n FROM job_log`))!.n).toBe(0);
      const ops = await t.rows(`SELECT module, action, status FROM op_log WHERE path LIKE '/ruoyi/monitor/job%' AND operator_name = 'admin' ORDER BY id`);
      expect(ops.map((o) => `${o.module}.${o.action}:${o.status}`)).toEqual([
        'sysJob.edit:200', 'sysJob.edit:400', 'sysJob.edit:400', 'sysJob.edit:400', 'sysJob.edit:400', 'sysJob.changeStatus:200', 'sysJob.changeStatus:200',
        'sysJob.run:200', 'sysJobLog.delete:200', 'sysJob.run:200', 'sysJobLog.clear:200',
      ]);
    });

    /** A RuoYi download (utils/request.js `download`): POST of the page's query params as a form. */
    async function download(path: string, form: string, token: string | null = admin) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await t.request(PREFIX + path, { method: 'POST', headers, body: form });
      return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
    }
    /** A download that must be a file: an XLSX (RuoYi saves every non-JSON answer as .xlsx), read back. */
    async function xlsx(path: string, form: string, token: string | null = admin) {
      const { res, bytes } = await download(path, form, token);
      const type = res.headers.get('content-type') ?? '';
      if (res.status !== 200 || type !== XLSX_TYPE) throw new Error(`${path}: HTTP ${res.status} ${type} ${new TextDecoder().decode(bytes.slice(0, 300))}`);
      return readSheet(bytes);
    }
    /** A download RuoYi must show as a message: HTTP 200, exactly application/json (its blobValidate), {code, msg}. */
    async function refusedDownload(path: string, form: string, token: string | null = admin) {
      const { res, bytes } = await download(path, form, token);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'application/json']);
      return JSON.parse(new TextDecoder().decode(bytes)) as { code: number; msg: string };
    }
    async function importFile(rows: string[][], updateSupport: '0' | '1', token = admin) {
      const rest = rows.slice(1);
      const bytes = new Uint8Array(await new Response(xlsxStream(rows[0]!, (async function* () { yield* rest; })())).arrayBuffer());
      const form = new FormData();
      form.set('file', new File([bytes], 'users.xlsx', { type: XLSX_TYPE }));
      const res = await t.request(`${PREFIX}/system/user/importData?updateSupport=${updateSupport}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      expect(res.status).toBe(200);
      return (await res.json()) as { code: number; msg: string };
    }
    const snapUsers = async () => JSON.stringify(await Promise.all(['users', 'user_role', 'user_post'].map((tb) => t.rows(`SELECT * FROM ${tb} ORDER BY 1, 2`))));

    test('Excel exports: each is our XLSX of exactly the rows its list shows for the same filter (every page of them)', async () => {
      for (const [name, status] of [['xl_a', 'enabled'], ['xl_b', 'disabled'], ['xl_c', 'disabled']] as const) {
        await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: name, password: PASSWORD, status } });
      }
      await rc('POST', '/login', { body: { username: 'admin', password: 'wrong-password-2' } });
      // Every page's export, with a filter of that page (pageNum/pageSize as RuoYi sends them, ignored).
      const filters: Record<string, string> = {
        '/system/user/export': 'userName=xl_&status=1',
        '/system/role/export': 'roleKey=admin&status=0',
        '/system/post/export': 'status=0',
        '/system/dict/type/export': 'dictType=sys_&status=0',
        '/system/dict/data/export': 'dictType=sys_normal_disable',
        '/system/config/export': 'configType=Y',
        '/monitor/logininfor/export': 'userName=admin&status=1',
        '/monitor/operlog/export': 'businessType=1&title=sysUser',
        '/monitor/job/export': 'status=0&jobGroup=SYSTEM',
        '/monitor/jobLog/export': 'status=0',
      };
      expect(Object.keys(filters).sort()).toEqual(EXPORTS.map((e) => e.path).sort());
      for (const [path, filter] of Object.entries(filters)) {
        const list = (await ok('GET', `${path.replace(/export$/, 'list')}?pageNum=1&pageSize=1&${filter}`, { token: admin })).json;
        const rows = await xlsx(path, `pageNum=1&pageSize=1&${filter}`);
        expect(`${path}: ${rows.length - 1} rows`).toBe(`${path}: ${list.total} rows`);
      }
      // The rows and cells are our export's (labels through our dictionaries), newest first.
      const users = await xlsx('/system/user/export', 'pageNum=1&pageSize=10&userName=xl_&status=1&params%5BbeginTime%5D=2000-01-01&params%5BendTime%5D=2999-12-31');
      expect(users[0]!.slice(0, 6)).toEqual(['ID', 'Login name', 'Nick name', 'Email', 'Phone', 'Status']);
      expect(users.slice(1).map((r) => [r[1], r[5]])).toEqual([['xl_c', '停用'], ['xl_b', '停用']]);
      expect((await xlsx('/system/user/export', 'userName=xl_&status=0')).slice(1).map((r) => r[1])).toEqual(['xl_a']);
      expect((await xlsx('/system/user/export', 'userName=xl_&params%5BendTime%5D=2000-01-01')).length).toBe(1);
      expect((await xlsx('/system/config/export', 'configType=N')).slice(1).every((r) => r[4] !== undefined)).toBe(true);
      // Refusals are RuoYi messages (HTTP 200 + JSON), not files: a value outside the table, a
      // filter our schema refuses, a group that is not ours, no token, a missing code.
      expect(await refusedDownload('/system/user/export', 'status=enabled')).toMatchObject({ code: 500, msg: "status: must be '0' (normal) or '1' (disabled)" });
      expect((await refusedDownload('/monitor/logininfor/export', 'status=2')).msg).toBe("status: must be '0' (success) or '1' (failure)");
      expect((await refusedDownload('/system/user/export', 'params%5BbeginTime%5D=yesterday')).code).toBe(500);
      expect((await refusedDownload('/monitor/job/export', 'jobGroup=DEFAULT')).msg).toMatch(/SYSTEM/);
      expect((await refusedDownload('/monitor/jobLog/export', 'jobName=nothing-like-it')).code).toBe(500);
      expect((await refusedDownload('/system/user/export', 'x=1', null)).code).toBe(401);
      const plain = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `xl_plain_${runtime}`, password: PASSWORD } });
      expect(plain.status).toBe(200);
      const plainToken = await login(`xl_plain_${runtime}`, PASSWORD);
      expect(await refusedDownload('/system/role/export', '', plainToken)).toMatchObject({ code: 500, msg: 'Insufficient permission' });
      // Each export is an op-log row under our module and action, with our filter.
      const logged = await t.rows(`SELECT module, action, status, params FROM op_log WHERE path = '/ruoyi/system/user/export' ORDER BY id`);
      expect(logged.map((r) => `${r.module}.${r.action}:${r.status}`)).toEqual(['sysUser.export:200', 'sysUser.export:200', 'sysUser.export:200', 'sysUser.export:200', 'sysUser.export:400', 'sysUser.export:400']);
      expect(JSON.parse(logged[1]!.params)).toEqual({ params: { loginName: 'xl_', status: 'disabled', createdFrom: '2000-01-01', createdTo: '2999-12-31' }, format: 'xlsx' });
    });

    test('user import: our template, a real import (no dry run) reported in msg, a refusal escaped and changing nothing', async () => {
      const template = await t.request(`${PREFIX}/system/user/importTemplate`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-www-form-urlencoded' } });
      expect([template.status, template.headers.get('content-type')]).toEqual([200, XLSX_TYPE]);
      const header = (await readSheet(new Uint8Array(await template.arrayBuffer())))[0]!;
      expect(header[0]).toBe('Login name*');
      // No initial password yet: a refusal of the whole file, shown by the dialog (HTML escaped).
      const before = await snapUsers();
      const noInit = await importFile([header, ['im_a', 'A'], ['im_b', 'B']], '0');
      expect(noInit.code).toBe(500);
      expect(noInit.msg).toContain('sys.user.initPassword');
      expect(await snapUsers()).toBe(before);
      await t.exec(`UPDATE configs SET config_value = ? WHERE config_key = 'sys.user.initPassword'`, 'Imported-Passw0rd-7');
      // Rows with errors: every error listed (row, column, our message), user data escaped, nothing written.
      const orgAt = header.indexOf('Organisation code');
      const withOrg = (name: string, nick: string, email: string, org: string) => Object.assign([name, nick, email], { [orgAt]: org }).map((v) => v ?? '');
      const bad = await importFile([header, ['im_a', 'A'], ['x', 'B'], ['im_c', 'C', 'not-an-email'], withOrg('im_d', 'D', '', '<img src=x onerror=alert(1)>')], '0');
      expect(bad.code).toBe(500);
      expect(bad.msg).toStartWith('很抱歉，导入失败！共 3 行数据有误');
      expect(bad.msg).toContain('<br/>1、第 3 行「Login name」：must be 2-64 characters');
      expect(bad.msg).toContain('<br/>2、第 4 行「Email」：');
      expect(bad.msg).toContain("<br/>3、第 5 行「Organisation code」：no organisation has the code '&#60;img src=x onerror=alert(1)&#62;'");
      expect(bad.msg).not.toContain('<img');
      // A refusal of the whole file (a column we do not know) is escaped too.
      const unknown = await importFile([[...header, '<b>Extra</b>'], ['im_a', 'A']], '0');
      expect(unknown.code).toBe(500);
      expect(unknown.msg).toContain('unknown column "&#60;b&#62;Extra&#60;/b&#62;"');
      expect(await snapUsers()).toBe(before);
      // A clean file is imported (RuoYi has no dry run).
      const good = await importFile([header, ['im_a', 'A'], ['im_b', 'B']], '0');
      expect(good).toEqual({ code: 200, msg: '恭喜您，数据已全部导入成功！共 2 条：新增 2 条，更新 0 条。' });
      expect((await t.rows(`SELECT login_name FROM users WHERE login_name LIKE 'im\_%' ESCAPE '\\' ORDER BY login_name`)).map((r) => r.login_name)).toEqual(['im_a', 'im_b']);
      // updateSupport=0: an existing name is an error; =1: it updates.
      const again = await importFile([header, ['im_a', 'A2']], '0');
      expect([again.code, again.msg]).toEqual([500, expect.stringContaining('第 2 行')]);
      expect((await importFile([header, ['im_a', 'A2']], '1')).msg).toContain('更新 1 条');
      expect((await t.row(`SELECT nick_name FROM users WHERE login_name = 'im_a'`))!.nick_name).toBe('A2');
      // Not a workbook, and over the 1 MiB JSON limit (the import has its own): our reader's 400, as
      // a message in the dialog (never an HTTP error status: the dialog would spin).
      const junk = new Uint8Array(1_200_000).fill(7);
      junk.set([0x50, 0x4b, 0x03, 0x04]);
      const form = new FormData();
      form.set('file', new File([junk], 'broken.xlsx'));
      const broken = await t.request(`${PREFIX}/system/user/importData?updateSupport=0`, { method: 'POST', headers: { authorization: `Bearer ${admin}` }, body: form });
      expect(broken.status).toBe(200);
      expect(((await broken.json()) as any)).toMatchObject({ code: 500, msg: expect.stringMatching(/not a valid \.xlsx workbook/) });
      const ops = await t.rows(`SELECT module, action, status FROM op_log WHERE path = '/ruoyi/system/user/importData' ORDER BY id`);
      expect(ops.map((o) => `${o.module}.${o.action}:${o.status}`)).toEqual(['sysUser.import:400', 'sysUser.import:200', 'sysUser.import:400', 'sysUser.import:200', 'sysUser.import:200', 'sysUser.import:200', 'sysUser.import:400']);
    });

    test('a delegated admin (orgAndBelow) exports and imports inside their scope only', async () => {
      const world = await delegationWorld(t, admin, `rx_${runtime}`);
      const codes = ['sys:user:page', 'sys:user:export', 'sys:user:import', 'sys:user:add'];
      const mgr = await world.caller(codes, 'orgAndBelow', world.org.sales);
      const inSales1 = await world.user(world.org.sales1);
      const inSupport = await world.user(world.org.support);
      const exported = (await xlsx('/system/user/export', 'pageNum=1&pageSize=10', mgr.token)).slice(1).map((r) => r[1]);
      expect(exported).toContain(inSales1.loginName);
      expect(exported).toContain(mgr.loginName);
      expect(exported).not.toContain(inSupport.loginName);
      expect(exported).not.toContain('admin');
      const listed = (await ok('GET', '/system/user/list?pageNum=1&pageSize=100', { token: mgr.token })).json.total;
      expect(exported.length).toBe(listed);
      // An import into an organisation outside their scope: refused whole, nothing written.
      const header = ['Login name*', 'Organisation code'];
      const before = await snapUsers();
      const out = await importFile([header, [`rx_in_${runtime}`, `rx_${runtime}_sales1`], [`rx_out_${runtime}`, `rx_${runtime}_support`]], '0', mgr.token);
      expect(out.code).toBe(500);
      expect(out.msg).toMatch(/第 3 行/);
      expect(await snapUsers()).toBe(before);
      expect((await importFile([header, [`rx_in_${runtime}`, `rx_${runtime}_sales1`]], '0', mgr.token)).code).toBe(200);
      expect((await t.row(`SELECT org_id FROM users WHERE login_name = ?`, `rx_in_${runtime}`))!.org_id).toBe(world.org.sales1);
    });

    test.skipIf(runtime !== 'd1')('round trips on D1: one per plain read, as ours; the combined RuoYi calls say what they cost', async () => {
      const userId = (await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'rt_user', password: PASSWORD } })).data.id;
      const roleId = (await t.row<{ id: number }>(`SELECT id FROM roles ORDER BY id DESC LIMIT 1`))!.id;
      const trips: Record<string, number> = {};
      for (const path of ['/getInfo', '/getRouters', '/system/user/list?pageNum=1&pageSize=10', '/system/role/list?pageNum=1&pageSize=10', '/system/menu/list', '/system/dept/list',
        '/monitor/online/list', '/monitor/logininfor/list?pageNum=1&pageSize=10', '/monitor/operlog/list?pageNum=1&pageSize=10', `/system/role/${roleId}`, '/system/user/deptTree',
        `/system/user/${userId}`, `/system/user/authRole/${userId}`, `/system/menu/roleMenuTreeselect/${roleId}`, `/system/role/deptTree/${roleId}`,
        '/system/dict/data/type/sys_normal_disable', '/system/dict/type/list?pageNum=1&pageSize=10', '/system/dict/data/list?pageNum=1&pageSize=10&dictType=sys_normal_disable',
        '/system/config/list?pageNum=1&pageSize=10', '/system/config/configKey/sys.user.initPassword', '/system/notice/list?pageNum=1&pageSize=10', '/system/notice/listTop',
        '/system/post/list?pageNum=1&pageSize=10', '/monitor/job/list?pageNum=1&pageSize=10', '/monitor/jobLog/list?pageNum=1&pageSize=10']) {
        trips[path.replace(/\?.*/, '').replace(/\/\d+$/, '/{id}')] = (await ok('GET', path, { token: admin })).rt;
      }
      trips['PUT /system/user/changeStatus'] = (await ok('PUT', '/system/user/changeStatus', { token: admin, body: { userId, status: '1' } })).rt;
      const form = (await ok('GET', `/system/user/${userId}`, { token: admin })).json.data;
      trips['PUT /system/user'] = (await ok('PUT', '/system/user', { token: admin, body: { ...form, nickName: 'RT' } })).rt;
      await ok('POST', '/system/post', { token: admin, body: { postCode: 'rt_post', postName: 'RT', postSort: 1, status: '0' } });
      const post = (await ok('GET', '/system/post/list?pageNum=1&pageSize=10&postCode=rt_post', { token: admin })).json.rows[0];
      trips['PUT /system/post'] = (await ok('PUT', '/system/post', { token: admin, body: { ...post, postName: 'RT 2' } })).rt;
      trips['POST /system/dict/data'] = (await ok('POST', '/system/dict/data', { token: admin, body: { dictType: 'sys_user_sex', dictLabel: 'RT', dictValue: 'rt', listClass: 'default', dictSort: 9, status: '0' } })).rt;
      const cfg = (await ok('GET', '/system/config/list?pageNum=1&pageSize=10&configKey=sys.account.registerUser', { token: admin })).json.rows[0];
      trips['PUT /system/config'] = (await ok('PUT', '/system/config', { token: admin, body: { ...cfg, configValue: 'false' } })).rt;
      await ok('POST', '/system/notice', { token: admin, body: { noticeTitle: 'RT', noticeType: '1', noticeContent: '<p>x</p>', status: '0' } });
      const notice = (await ok('GET', '/system/notice/listTop', { token: admin })).json.data.find((n: any) => n.noticeTitle === 'RT');
      trips['GET /system/notice/{id} (published)'] = (await ok('GET', `/system/notice/${notice.noticeId}`, { token: admin })).rt;
      trips['POST /system/notice/markRead'] = (await ok('POST', `/system/notice/markRead?noticeId=${notice.noticeId}`, { token: admin })).rt;
      const job = (await ok('GET', '/monitor/job/list?pageNum=1&pageSize=1', { token: admin })).json.rows[0];
      trips['PUT /monitor/job/changeStatus'] = (await ok('PUT', '/monitor/job/changeStatus', { token: admin, body: { jobId: job.jobId, status: '0' } })).rt;
      const jobForm = (await ok('GET', `/monitor/job/${job.jobId}`, { token: admin })).json.data;
      trips['PUT /monitor/job'] = (await ok('PUT', '/monitor/job', { token: admin, body: { ...jobForm, misfirePolicy: '3' } })).rt;
      trips['GET /monitor/jobLog/list?jobName'] = (await ok('GET', `/monitor/jobLog/list?pageNum=1&pageSize=10&jobName=${encodeURIComponent(job.jobName)}`, { token: admin })).rt;
      // The Excel exports: as ours (the caller, the labels and the first chunk in one), the job log's
      // name filter one more (the job looked up by name, as its list does).
      const rtOf = (res: Response) => Number(res.headers.get('server-timing')?.match(/desc="(\d+) rt/)?.[1] ?? NaN);
      for (const e of EXPORTS) trips[`POST ${e.path}`] = rtOf((await download(e.path, 'pageNum=1&pageSize=10')).res);
      trips['POST /monitor/jobLog/export?jobName'] = rtOf((await download('/monitor/jobLog/export', `jobName=${encodeURIComponent(job.jobName)}`)).res);
      trips['POST /app/sysUser/export (ours)'] = rtOf(await t.request('/app/sysUser/export', { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: '{}' }));
      trips['POST /system/user/importTemplate'] = rtOf(await t.request(`${PREFIX}/system/user/importTemplate`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } }));
      expect(trips).toEqual({
        '/getInfo': 1,
        '/getRouters': 1,
        '/system/user/list': 1,
        '/system/role/list': 1,
        '/system/menu/list': 1,
        '/system/dept/list': 1,
        '/monitor/online/list': 1,
        '/monitor/logininfor/list': 1,
        '/monitor/operlog/list': 1,
        '/system/role/{id}': 1,
        '/system/user/deptTree': 1,
        // Our detail, the role picker and the user's role ids: three of our reads, sent together;
        // the first carries the caller's auth, the other two follow its verdict side by side
        // (the meter counts calls in flight together as one round trip).
        '/system/user/{id}': 2,
        '/system/user/authRole/{id}': 2,
        '/system/menu/roleMenuTreeselect/{id}': 2,
        '/system/role/deptTree/{id}': 2,
        // Our write, as sysUser/changeStatus: judged, then one batch.
        'PUT /system/user/changeStatus': 2,
        // The stored user and its roles (to send only what changed), then our edit's batch.
        'PUT /system/user': 3,
        '/system/dict/data/type/sys_normal_disable': 1,
        '/system/dict/type/list': 1,
        '/system/dict/data/list': 1,
        '/system/config/list': 1,
        '/system/config/configKey/sys.user.initPassword': 1,
        '/system/notice/list': 1,
        '/system/notice/listTop': 1,
        '/system/post/list': 1,
        '/monitor/job/list': 1,
        '/monitor/jobLog/list': 1,
        // Our writes, as ours: judged with the first statement, then one batch.
        'PUT /system/post': 2,
        'POST /system/dict/data': 2,
        'PUT /system/config': 2,
        'POST /system/notice/markRead': 1,
        'PUT /monitor/job/changeStatus': 2,
        'GET /system/notice/{id} (published)': 1,
        // The stored job (name, target and schedule as handed out), then our edit: its read and batch.
        'PUT /monitor/job': 3,
        // The job by name (RuoYi's log page filters by it), then our log page.
        'GET /monitor/jobLog/list?jobName': 2,
        'POST /system/user/export': 1,
        'POST /system/role/export': 1,
        'POST /system/post/export': 1,
        'POST /system/dict/type/export': 1,
        'POST /system/dict/data/export': 1,
        'POST /system/config/export': 1,
        'POST /monitor/logininfor/export': 1,
        'POST /monitor/operlog/export': 1,
        'POST /monitor/job/export': 1,
        'POST /monitor/jobLog/export': 1,
        'POST /monitor/jobLog/export?jobName': 2,
        'POST /app/sysUser/export (ours)': 1,
        'POST /system/user/importTemplate': 1,
      });
    });

    test('documented errors: Java-only areas are 501, unknown paths a code (never an HTTP 404)', async () => {
      const gen = await rc('GET', '/tool/gen/list?pageNum=1', { token: admin });
      expect([gen.status, gen.json.code]).toEqual([200, 501]);
      expect(gen.json.msg).toMatch(/Code generation/);
      const unknown = await rc('GET', '/system/nothing/here', { token: admin });
      expect([unknown.status, unknown.json.code]).toEqual([200, 500]);
      const unlock = await rc('GET', '/monitor/logininfor/unlock/admin', { token: admin });
      expect(unlock.json.code).toBe(501);
      const dict = (await ok('GET', '/system/dict/data/type/sys_normal_disable', { token: admin })).json.data;
      expect(dict.map((d: any) => [d.dictValue, d.dictLabel])).toEqual([['0', '正常'], ['1', '停用']]);
    });
  });
}

describe('captcha on', () => {
  test('RuoYi gets our captcha as a PNG (bare base64), and its login checks it as ours does', async () => {
    const t = await makeTestApp({ env: { RUOYI_API_PREFIX: PREFIX, CAPTCHA_ENABLED: 'true' } });
    const get = async () => (await (await t.request(`${PREFIX}/captchaImage`, { method: 'GET' })).json()) as any;
    const cap = await get();
    expect(cap).toMatchObject({ code: 200, captchaEnabled: true });
    const png = Uint8Array.from(atob(cap.img), (ch) => ch.charCodeAt(0));
    expect([...png.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const post = async (body: unknown) =>
      (await (await t.request(`${PREFIX}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as any;
    // Without a code, and with a wrong one: code 500 (never 401) and the captcha is used up.
    expect((await post({ username: 'admin', password: ADMIN_PASSWORD })).code).toBe(500);
    const wrong = await post({ username: 'admin', password: ADMIN_PASSWORD, code: 'ZZZZ', uuid: cap.uuid });
    expect(wrong).toMatchObject({ code: 500, msg: 'securityCode: the verification code is wrong or has expired' });
    // The right answer (planted: the image is for eyes) logs in.
    const next = await get();
    await t.exec(`UPDATE captchas SET answer_hash = ? WHERE key = ?`, await answerHash(t.deps, next.uuid, 'ABCD'), next.uuid);
    const good = await post({ username: 'admin', password: ADMIN_PASSWORD, code: 'abcd', uuid: next.uuid });
    expect(good.code).toBe(200);
    expect(typeof good.token).toBe('string');
  });
});

describe('dialect off by default', () => {
  test('without RUOYI_API_PREFIX nothing answers under /ruoyi', async () => {
    const t = await makeTestApp();
    const r = await t.request('/ruoyi/getInfo', { method: 'GET' });
    expect(r.status).toBe(404);
  });
});
