import { beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { userWithTotp } from './support/mfa.ts';
import { userWithCodes } from './support/rbac.ts';
import { SECOND_FACTOR_ELSEWHERE } from '../src/compat/messages.ts';

// The vue-vben-admin dialect (src/compat/vben, docs/vben.md) through app.request, on Bun and on a
// real D1: each mapped call's shape in vben's envelope, errors that never start vben's 401 loop,
// the same scope/containment/op log as /app, and the D1 round trips per call (Server-Timing).

const ORIGIN = 'http://vben.test';
const P = '/vben';
const PASSWORD = 'Vben-Dialect-Pass-42';
const rt = (res: Response) => Number(res.headers.get('server-timing')?.match(/db;dur=[\d.]+;desc="(\d+) rt/)?.[1] ?? NaN);

for (const runtime of RUNTIMES) {
  describe(runtime, () => {
    let t: AnyTestApp;
    let admin: string;
    /** A vben call: the raw answer and its body, `{code, data, error, message}`. */
    const v = async (method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
      const r = await t.call(method, P + path, init);
      return { status: r.status, body: r.json as unknown as { code: number; data: any; error: string | null; message: string }, res: r.res };
    };
    const vok = async (method: string, path: string, token: string, body?: unknown) => {
      const r = await v(method, path, { token, body });
      if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.body.message}`);
      expect(r.body.code).toBe(0);
      return r;
    };
    const vlogin = async (username: string, password: string) => (await vok('POST', '/auth/login', '', { username, password })).body.data.accessToken as string;

    beforeAll(async () => {
      t = await makeTestApp({ runtime, env: { VBEN_API_PREFIX: P, CORS_ORIGINS: ORIGIN } });
      admin = await t.login();
    }, D1_START_MS);

    describe('core', () => {
      test('login as vben sends it → {accessToken}, which works on our API too', async () => {
        const r = await v('POST', '/auth/login', { body: { selectAccount: 'vben', username: 'admin', password: ADMIN_PASSWORD, captcha: true } });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ code: 0, error: null, message: 'ok' });
        expect(typeof r.body.data.accessToken).toBe('string');
        const info = await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: r.body.data.accessToken });
        expect(info.status).toBe(200);
      });

      test('wrong password: 403 (not 401, which vben takes for an expired session) with our message in error and message', async () => {
        const r = await v('POST', '/auth/login', { body: { username: 'admin', password: 'wrong-password' } });
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({ code: -1, data: null, error: 'Invalid login name or password', message: 'Invalid login name or password' });
        const logged = await t.row<{ status: string }>(`SELECT status FROM login_log WHERE login_name = 'admin' ORDER BY id DESC LIMIT 1`);
        expect(logged?.status).toBe('failure');
      });

      test('login of an account with a second factor: 403 in words (vben has no second step), never a null token, no session', async () => {
        const name = `mfa_vb_${runtime}`;
        const password = 'Second-Factor-Vb-9';
        await userWithTotp(t, admin, name, password);
        const sessions = await t.count('sessions');
        const r = await v('POST', '/auth/login', { body: { username: name, password } });
        expect(r.status).toBe(403);
        expect(r.body).toMatchObject({ code: -1, data: null, message: SECOND_FACTOR_ELSEWHERE });
        expect(await t.count('sessions')).toBe(sessions);
      });

      test('missing password: 400 naming the field', async () => {
        const r = await v('POST', '/auth/login', { body: { username: 'admin' } });
        expect(r.status).toBe(400);
        expect(r.body.error).toStartWith('password');
      });

      test('codes, user/info, menu/all', async () => {
        const codes = await vok('GET', '/auth/codes', admin);
        expect(codes.body.data).toEqual(['*']);
        const info = await vok('GET', '/user/info', admin);
        expect(info.body.data).toMatchObject({ userId: '1', username: 'admin', roles: ['superAdmin'] });
        expect(typeof info.body.data.realName).toBe('string');
        const menus = (await vok('GET', '/menu/all', admin)).body.data as any[];
        const system = menus.find((m) => m.path === '/system');
        expect(system).toMatchObject({ component: 'BasicLayout', meta: { title: expect.any(String), icon: 'ant-design:setting-outlined' } });
        const names: string[] = [];
        const walk = (rs: any[]) => rs.forEach((r) => (names.push(r.name), expect(r.path).toStartWith('/'), r.children && walk(r.children)));
        walk(menus);
        expect(new Set(names).size).toBe(names.length);
        expect(names.filter((n) => /^Menu\d+$/.test(n))).toEqual([]);
        expect(names).toContain('Users');
      });

      test('no token: 401 (vben: session expired → its login page), in its envelope', async () => {
        const r = await v('GET', '/user/info');
        expect(r.status).toBe(401);
        expect(r.body).toMatchObject({ code: -1, data: null, error: 'Not logged in' });
      });

      test('logout without a token (as vben sends it) is 200, never 401; with a token it revokes the session', async () => {
        expect((await v('POST', '/auth/logout')).status).toBe(200);
        expect((await v('POST', '/auth/logout', { body: { withCredentials: true } })).status).toBe(200);
        const token = await vlogin('admin', ADMIN_PASSWORD);
        expect((await v('POST', '/auth/logout', { token })).status).toBe(200);
        const after = await v('GET', '/user/info', { token });
        expect(after.status).toBe(401);
        // The revoked token logs out again: still 200.
        expect((await v('POST', '/auth/logout', { token })).status).toBe(200);
        expect((await v('POST', '/auth/logout', { headers: { authorization: 'Bearer garbage' } })).status).toBe(200);
      });

      test('logout as vben sends it (no token, the logout cookie its login set) ends that session, and only it', async () => {
        const login = await v('POST', '/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
        const token = login.body.data.accessToken as string;
        const other = await vlogin('admin', ADMIN_PASSWORD);
        // The cookie: HttpOnly, SameSite=Lax, sent to the logout alone, as long-lived as the session.
        const set = login.res.headers.get('set-cookie') ?? '';
        expect(set).toMatch(new RegExp(`^vben_logout=[0-9a-f-]{36}; Max-Age=${t.deps.config.TOKEN_TTL_SECONDS}; Path=${P}/auth/logout; HttpOnly; SameSite=Lax$`));
        const cookie = set.split(';')[0]!;
        // It authenticates nothing: on any other route it is no token.
        expect((await v('GET', '/user/info', { headers: { cookie } })).status).toBe(401);
        // A forged or malformed id changes nothing.
        const live = async () => (await t.row<{ n: number }>('SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL'))!.n;
        const before = await live();
        for (const forged of ['vben_logout=00000000-0000-4000-8000-000000000000', "vben_logout=x' OR 1=1 --"]) {
          expect((await v('POST', '/auth/logout', { headers: { cookie: forged } })).status).toBe(200);
        }
        expect(await live()).toBe(before);
        // The real one ends its session, which is then refused; the other session of the same user stays.
        const out = await v('POST', '/auth/logout', { headers: { cookie } });
        expect(out.status).toBe(200);
        expect(out.res.headers.get('set-cookie')).toMatch(new RegExp(`^vben_logout=; Max-Age=0; Path=${P}/auth/logout; HttpOnly; SameSite=Lax`));
        expect(await live()).toBe(before - 1);
        expect((await v('GET', '/user/info', { token })).status).toBe(401);
        expect((await v('GET', '/user/info', { token: other })).status).toBe(200);
      });

      test('timezone (the playground header): none stored, none offered, setting refused', async () => {
        expect((await vok('GET', '/timezone/getTimezone', admin)).body.data).toBeNull();
        expect((await v('GET', '/timezone/getTimezone')).status).toBe(401);
        expect((await vok('GET', '/timezone/getTimezoneOptions', admin)).body.data).toEqual([]);
        expect((await v('POST', '/timezone/setTimezone', { token: admin, body: { timezone: 'UTC' } })).status).toBe(400);
      });

      test('refresh: an honest 403 (no refresh token here), never a token', async () => {
        const r = await v('POST', '/auth/refresh', { body: { withCredentials: true } });
        expect(r.status).toBe(403);
        expect(r.body.error).toContain('no refresh token');
      });

      test('CORS under the prefix: credentials and PUT/DELETE for the listed origin; the rest of the API unchanged', async () => {
        const pre = await t.request(`${P}/system/user/1`, { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'PUT' } });
        expect(pre.headers.get('access-control-allow-origin')).toBe(ORIGIN);
        expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
        expect(pre.headers.get('access-control-allow-methods')).toContain('DELETE');
        const other = await t.request('/app/sysUser/page', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
        expect(other.headers.get('access-control-allow-credentials')).toBeNull();
        const stranger = await t.request(`${P}/auth/login`, { method: 'OPTIONS', headers: { origin: 'http://evil.test', 'access-control-request-method': 'POST' } });
        expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
      });
    });

    describe('system views', () => {
      const rts: Record<string, number> = {};
      let userId: string;
      let rename = NaN;
      let deptId: string;

      test('dept: create, list as a tree, edit without a version, delete', async () => {
        const root = await vok('POST', '/system/dept', admin, { name: 'Head office', status: 1, remark: 'HQ' });
        rts['POST dept'] = rt(root.res);
        const child = await vok('POST', '/system/dept', admin, { name: 'Sales', pid: root.body.data.id, status: 1, remark: '' });
        deptId = child.body.data.id;
        const list = await vok('GET', '/system/dept/list', admin);
        rts['GET dept/list'] = rt(list.res);
        const hq = (list.body.data as any[]).find((d) => d.id === root.body.data.id);
        expect(hq).toMatchObject({ pid: '0', name: 'Head office', status: 1, remark: 'HQ', createTime: expect.any(String) });
        expect(hq.children[0]).toMatchObject({ id: deptId, pid: root.body.data.id, name: 'Sales' });
        const edited = await vok('PUT', `/system/dept/${deptId}`, admin, { name: 'Sales EU', pid: root.body.data.id, status: 0, remark: 'x' });
        rts['PUT dept'] = rt(edited.res);
        const row = await t.row<{ name: string; status: string; version: number }>('SELECT name, status, version FROM orgs WHERE id = ?', Number(deptId));
        expect(row).toMatchObject({ name: 'Sales EU', status: 'disabled', version: 2 });
        // Our rule, our message: an organisation with children is not deleted.
        const refused = await v('DELETE', `/system/dept/${root.body.data.id}`, { token: admin });
        expect(refused.status).toBe(400);
        expect(refused.body.code).toBe(-1);
        expect(refused.body.error).toBeTruthy();
        const spare = await vok('POST', '/system/dept', admin, { name: 'Spare', status: 1 });
        rts['DELETE dept'] = rt((await vok('DELETE', `/system/dept/${spare.body.data.id}`, admin)).res);
      });

      test('user: create, page with filters, status switch, edit, delete; op-log rows name the operation', async () => {
        // vben's form has no password: ours comes from sys.user.initPassword, else our 400.
        const refused = await v('POST', '/system/user', { token: admin, body: { name: 'vb_alice', deptId, status: 1, remark: 'r' } });
        expect(refused.status).toBe(400);
        expect(refused.body.error).toContain('initPassword');
        await t.exec(`UPDATE configs SET config_value = ? WHERE config_key = 'sys.user.initPassword'`, PASSWORD);
        const made = await vok('POST', '/system/user', admin, { name: 'vb_alice', deptId, status: 1, remark: 'r' });
        rts['POST user'] = rt(made.res);
        userId = made.body.data.id;
        expect(made.body.data).toMatchObject({ name: 'vb_alice', deptId, status: 1, remark: 'r' });
        const page = await vok('GET', `/system/user/list?page=1&pageSize=200&name=vb_&deptId=&status=1`, admin);
        rts['GET user/list'] = rt(page.res);
        expect(page.body.data.total).toBe(1);
        expect(page.body.data.items[0]).toMatchObject({ id: userId, name: 'vb_alice', status: 1, deptId, createTime: expect.any(String) });
        const inDept = await vok('GET', `/system/user/list?page=1&pageSize=20&deptId=${deptId}`, admin);
        expect(inDept.body.data.items.map((u: any) => u.id)).toEqual([userId]);
        rts['PUT user {status}'] = rt((await vok('PUT', `/system/user/${userId}`, admin, { status: 0 })).res);
        expect((await t.row<{ status: string }>('SELECT status FROM users WHERE id = ?', Number(userId)))?.status).toBe('disabled');
        rename = rt((await vok('PUT', `/system/user/${userId}`, admin, { name: 'vb_alice2', deptId: '', status: 1, remark: 'edited' })).res);
        rts['PUT user'] = rt((await vok('PUT', `/system/user/${userId}`, admin, { name: 'vb_alice2', deptId: '', status: 1, remark: 'edited again' })).res);
        const row = await t.row<{ login_name: string; org_id: number | null; status: string; remark: string }>('SELECT login_name, org_id, status, remark FROM users WHERE id = ?', Number(userId));
        expect(row).toEqual({ login_name: 'vb_alice2', org_id: null, status: 'enabled', remark: 'edited again' });
        const ops = await t.rows<{ module: string; action: string; path: string; status: number }>(
          `SELECT module, action, path, status FROM op_log WHERE path LIKE '/vben/system/user%' ORDER BY id`,
        );
        expect(ops.map((o) => `${o.module}/${o.action} ${o.status}`)).toEqual(['sysUser/add 400', 'sysUser/add 200', 'sysUser/changeStatus 200', 'sysUser/edit 200', 'sysUser/edit 200']);
        const extra = await vok('POST', '/system/user', admin, { name: 'vb_bob', status: 1 });
        rts['DELETE user'] = rt((await vok('DELETE', `/system/user/${extra.body.data.id}`, admin)).res);
        expect(await t.row('SELECT id FROM users WHERE id = ?', Number(extra.body.data.id))).toBeNull();
      });

      test('bad input: a clear 400 in the envelope, nothing changed', async () => {
        for (const [method, path, body] of [
          ['PUT', `/system/user/abc`, { status: 1 }],
          ['PUT', `/system/user/${userId}`, { status: 2 }],
          ['PUT', `/system/user/${userId}`, { name: 'x', password: 'sneaky' }],
          ['POST', '/system/dept', { name: '' }],
        ] as const) {
          const r = await v(method, path, { token: admin, body });
          expect(r.status).toBe(400);
          expect(r.body).toMatchObject({ code: -1, data: null });
          expect(r.body.error).toBe(r.body.message);
        }
        expect((await t.row<{ login_name: string }>('SELECT login_name FROM users WHERE id = ?', Number(userId)))?.login_name).toBe('vb_alice2');
      });

      test('role list, menu tree, name-exists / path-exists', async () => {
        const perm = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Perm', code: 'vb_perm' } });
        await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: perm.data.id, menuIds: [3, 2] } });
        rts['POST role'] = rt((await vok('POST', '/system/role', admin, { name: 'Counted', status: 1, permissions: ['2', '3'] })).res);
        const roles = await vok('GET', '/system/role/list?page=1&pageSize=20', admin);
        rts['GET role/list'] = rt(roles.res);
        expect(roles.body.data.items.find((r: any) => r.code === 'superAdmin')).toMatchObject({ id: expect.any(String), status: 1, permissions: [] });
        const helpdesk = roles.body.data.items.find((r: any) => r.code === 'vb_perm');
        const granted = await t.rows<{ menu_id: number }>('SELECT menu_id FROM role_menu WHERE role_id = ? ORDER BY menu_id', Number(helpdesk?.id));
        expect(granted.length).toBe(2);
        expect(helpdesk.permissions).toEqual(granted.map((g) => String(g.menu_id)));
        const menus = await vok('GET', '/system/menu/list', admin);
        rts['GET menu/list'] = rt(menus.res);
        const users = (menus.body.data as any[]).flatMap((m) => m.children ?? []).find((m: any) => m.path === '/user/list');
        const usersId: string = users.id; // read first: bun's toMatchObject writes its matchers into the object
        expect(typeof usersId).toBe('string');
        expect(users).toMatchObject({ type: 'menu', name: 'Users', status: 1, meta: { title: 'Users' } });
        expect(users.children[0]).toMatchObject({ type: 'button', authCode: 'sys:user:page' });
        expect((await vok('GET', '/system/menu/name-exists?name=users', admin)).body.data).toBe(true);
        expect((await vok('GET', `/system/menu/name-exists?name=Users&id=${usersId}`, admin)).body.data).toBe(false);
        expect((await vok('GET', '/system/menu/path-exists?path=/user/list', admin)).body.data).toBe(true);
        const free = await vok('GET', '/system/menu/path-exists?path=/nowhere', admin);
        rts['GET menu/path-exists'] = rt(free.res);
        expect(free.body.data).toBe(false);
      });

      test('menu: create, edit without a version, delete; vben field names in refusals', async () => {
        const made = await vok('POST', '/system/menu', admin, {
          type: 'catalog', name: 'VbReports', pid: '0', path: '/vb-reports', status: 1, authCode: '',
          meta: { title: 'Reports', icon: 'mdi:chart-bar', order: 9, keepAlive: false, hideInMenu: false },
        });
        rts['POST menu'] = rt(made.res);
        const id: string = made.body.data.id;
        expect(made.body.data).toMatchObject({ pid: '0', name: 'VbReports', type: 'catalog', path: '/vb-reports', status: 1, meta: { title: 'Reports', icon: 'mdi:chart-bar', order: 9 } });
        const page = await vok('POST', '/system/menu', admin, { type: 'menu', name: 'VbDaily', pid: id, path: '/vb-reports/daily', component: '/reports/daily', status: 1, meta: { title: 'Daily' } });
        const edited = await vok('PUT', `/system/menu/${page.body.data.id}`, admin, { type: 'menu', name: 'VbDaily', pid: id, path: '/vb-reports/daily', component: '/reports/daily', status: 0, meta: { title: 'Daily report', keepAlive: true } });
        rts['PUT menu'] = rt(edited.res);
        expect(await t.row('SELECT title, status, keep_alive, version FROM menus WHERE id = ?', Number(page.body.data.id))).toEqual({ title: 'Daily report', status: 'disabled', keep_alive: 1, version: 2 });
        const link = await v('POST', '/system/menu', { token: admin, body: { type: 'link', name: 'VbLink', pid: '0', meta: { title: 'Docs', link: 'https://example.com' } } });
        expect(link.status).toBe(400);
        expect(link.body.error).toContain('not supported');
        const noTitle = await v('POST', '/system/menu', { token: admin, body: { type: 'menu', name: 'VbNoTitle', pid: '0', meta: {} } });
        expect(noTitle.status).toBe(400);
        expect(noTitle.body.error).toStartWith('meta.title');
        expect((await v('DELETE', `/system/menu/${id}`, { token: admin })).status).toBe(400); // has children: our rule
        rts['DELETE menu'] = rt((await vok('DELETE', `/system/menu/${page.body.data.id}`, admin)).res);
        await vok('DELETE', `/system/menu/${id}`, admin);
        expect(await t.row(`SELECT id FROM menus WHERE name LIKE 'Vb%'`)).toBeNull();
      });

      test("the module's own request rules apply: a login name with a space; a role's name and menus are edited on /app", async () => {
        const r = await v('POST', '/system/user', { token: admin, body: { name: 'bad name', status: 1 } });
        expect(r.status).toBe(400);
        expect(r.body.error).toStartWith('name:');
        expect(await t.row(`SELECT id FROM users WHERE login_name = 'bad name'`)).toBeNull();
        const edit = await v('PUT', '/system/role/1', { token: admin, body: { name: 'R', status: 1, remark: '', permissions: ['1'] } });
        expect(edit.status).toBe(400);
        expect(edit.body.error).toContain('/app/sysRole');
      });

      test('the role form creates a role with its menus in one write (a code made up for it), as vben sends it', async () => {
        const menuIds = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN ('sys:user:page', 'sys:user:detail') ORDER BY id`)).map((r) => String(r.id));
        const r = await v('POST', '/system/role', { token: admin, body: { name: 'Readers', status: 1, remark: 'made in vben', permissions: menuIds } });
        expect(r.status).toBe(200);
        expect(r.body.data).toMatchObject({ name: 'Readers', status: 1, remark: 'made in vben', permissions: menuIds });
        expect(r.body.data.code).toMatch(/^vben_[0-9a-f]{12}$/);
        const granted = await t.rows<{ menu_id: number }>('SELECT menu_id FROM role_menu WHERE role_id = ? ORDER BY menu_id', Number(r.body.data.id));
        expect(granted.map((g) => String(g.menu_id))).toEqual(menuIds);
        // The list shows it with its menus; a second role of the same name gets its own code.
        const again = await v('POST', '/system/role', { token: admin, body: { name: 'Readers', status: 0 } });
        expect(again.status).toBe(200);
        expect(again.body.data.code).not.toBe(r.body.data.code);
        const listed = (await vok('GET', '/system/role/list?page=1&pageSize=50&name=Readers', admin)).body.data.items as { id: string; permissions: string[] }[];
        expect(listed.find((x) => x.id === r.body.data.id)?.permissions).toEqual(menuIds);
        // An unknown menu: 400 naming it, and no role behind.
        const roles = await t.count('roles');
        const unknown = await v('POST', '/system/role', { token: admin, body: { name: 'Ghost', status: 1, permissions: ['999999'] } });
        expect(unknown.status).toBe(400);
        expect(unknown.body.error).toContain('999999');
        expect(await t.count('roles')).toBe(roles);
        expect((await v('POST', '/system/role', { token: admin, body: { status: 1 } })).status).toBe(400);
        expect(await t.count('roles')).toBe(roles);
      });

      test('a delegated admin: scope and containment hold through the dialect', async () => {
        // A role with the user codes and scope `all`, but none of the super admin's other codes.
        const codes = ['sys:user:page', 'sys:user:edit', 'sys:user:changeStatus', 'sys:user:delete', 'sys:role:page', 'sys:role:changeStatus'];
        const menuIds = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(codes))).map((r) => r.id);
        const role = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Helpdesk', code: 'vb_helpdesk', dataScope: 'all' } });
        await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role.data.id, menuIds } });
        const wide = await t.call('POST', '/app/sysRole/add', { token: admin, body: { name: 'Wide', code: 'vb_wide', status: 'disabled' } });
        const all = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IS NOT NULL`)).map((r) => r.id);
        await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: wide.data.id, menuIds: all } });
        await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'vb_helper', password: PASSWORD, roleIds: [role.data.id] } });
        const helper = await vlogin('vb_helper', PASSWORD);
        const before = await t.row('SELECT status, version FROM users WHERE id = 1');
        // The super admin holds codes the helper lacks: 403 "outside your authority", nothing changed.
        for (const [method, path, body] of [
          ['PUT', '/system/user/1', { status: 0 }],
          ['PUT', '/system/user/1', { name: 'admin', remark: 'pwned' }],
          ['DELETE', '/system/user/1', undefined],
        ] as const) {
          const r = await v(method, path, { token: helper, body });
          expect(r.status).toBe(403);
          expect(r.body.error).toMatch(/authority|super ?admin/i);
        }
        expect(await t.row('SELECT status, version FROM users WHERE id = 1')).toEqual(before);
        // Nobody widens: enabling a role carrying codes the helper lacks is refused.
        const widen = await v('PUT', `/system/role/${wide.data.id}`, { token: helper, body: { status: 1 } });
        expect(widen.status).toBe(403);
        expect((await t.row<{ status: string }>('SELECT status FROM roles WHERE id = ?', wide.data.id))?.status).toBe('disabled');
        // Creating a role: sys:role:add alone (no grantMenu) may not give it menus; with grantMenu,
        // only menus the helper holds. Refused whole: no role behind.
        const rolesBefore = await t.count('roles');
        const holdsAdd = ['sys:role:add'];
        const addMenus = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(holdsAdd))).map((r) => r.id);
        await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role.data.id, menuIds: [...menuIds, ...addMenus] } });
        const mine = menuIds.map(String);
        const noGrantCode = await v('POST', '/system/role', { token: helper, body: { name: 'Mine', status: 1, permissions: mine } });
        expect([noGrantCode.status, noGrantCode.body.error]).toEqual([403, expect.stringContaining('sys:role:grantMenu')]);
        const grantMenuIds = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission = 'sys:role:grantMenu'`)).map((r) => r.id);
        await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role.data.id, menuIds: [...menuIds, ...addMenus, ...grantMenuIds] } });
        const notHeld = (await t.row<{ id: number }>(`SELECT id FROM menus WHERE permission = 'sys:backup:download'`))!.id;
        const widen2 = await v('POST', '/system/role', { token: helper, body: { name: 'Wider', status: 1, permissions: [...mine, String(notHeld)] } });
        expect([widen2.status, widen2.body.error]).toEqual([403, expect.stringContaining('hold yourself')]);
        expect(await t.count('roles')).toBe(rolesBefore);
        const held = await v('POST', '/system/role', { token: helper, body: { name: 'Mine', status: 1, permissions: mine } });
        expect(held.status).toBe(200);
        expect(await t.count('roles')).toBe(rolesBefore + 1);
        // No code, no call: the helper cannot create users or read the departments.
        expect((await v('POST', '/system/user', { token: helper, body: { name: 'vb_x' } })).status).toBe(403);
        expect((await v('GET', '/system/dept/list', { token: helper })).status).toBe(403);
        const refusedRows = await t.rows<{ status: number }>(`SELECT status FROM op_log WHERE operator_name = 'vb_helper' AND path LIKE '/vben/%' ORDER BY id`);
        expect(refusedRows.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 200, 403]);
      });

      test("the status switch is changeStatus, with its own code: sys:user:edit alone does not switch a user", async () => {
        const editor = await userWithCodes(t, ['sys:user:page', 'sys:user:edit', 'sys:role:page'], `vb_editor_${runtime}`);
        const target = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: `vb_target_${runtime}`, password: PASSWORD } });
        const before = await t.row('SELECT status, version FROM users WHERE id = ?', target.data.id);
        const r = await v('PUT', `/system/user/${target.data.id}`, { token: editor.token, body: { status: 0 } });
        expect([r.status, r.body.error]).toEqual([403, 'status: changing it requires the permission sys:user:changeStatus']);
        expect(await t.row('SELECT status, version FROM users WHERE id = ?', target.data.id)).toEqual(before);
        // The same through /app's own route, which asks for the code at its door.
        expect((await t.call('POST', '/app/sysUser/changeStatus', { token: editor.token, body: { id: target.data.id, status: 'disabled' } })).status).toBe(403);
        // With the code, the switch works.
        const switcher = await userWithCodes(t, ['sys:user:page', 'sys:user:edit', 'sys:user:changeStatus'], `vb_switcher_${runtime}`);
        expect((await v('PUT', `/system/user/${target.data.id}`, { token: switcher.token, body: { status: 0 } })).status).toBe(200);
        expect((await t.row<{ status: string }>('SELECT status FROM users WHERE id = ?', target.data.id))?.status).toBe('disabled');
      });

      test('a revoked session answers 401 on the next call (vben: back to its login page, once)', async () => {
        const token = await vlogin('admin', ADMIN_PASSWORD);
        const jti = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
        await t.exec(`UPDATE sessions SET revoked_at = '2026-11-22T00:00:00.000Z' WHERE id = ?`, jti);
        const r = await v('GET', '/system/user/list?page=1&pageSize=20', { token });
        expect(r.status).toBe(401);
        expect(r.body.code).toBe(-1);
        // vben then logs out through its bare client, without the token: 200, the loop ends there.
        expect((await v('POST', '/auth/logout')).status).toBe(200);
      });

      if (runtime === 'd1') {
        test('D1 round trips per call: ≤ 1 per read, ≤ 2 per write; a rename + move costs no more than on /app', async () => {
          const org = await t.call('POST', '/app/sysOrg/add', { token: admin, body: { name: 'Native', code: 'vb_native' } });
          const made = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'vb_native', password: PASSWORD, orgId: org.data.id } });
          const edit = await t.call('POST', '/app/sysUser/edit', { token: admin, body: { id: made.data.id, version: made.data.version, loginName: 'vb_native2', orgId: null } });
          expect(edit.status).toBe(200);
          const native = rt(edit.res);
          console.log('vben dialect PUT user (rename + move):', rename, 'round trips; /app/sysUser/edit with both:', native);
          console.log('vben dialect round trips (D1):', JSON.stringify(rts));
          expect(rename).toBeLessThanOrEqual(native);
          for (const [call, n] of Object.entries(rts)) {
            expect([call, n]).toEqual([call, call.startsWith('GET') ? 1 : Math.min(n, 2)]);
          }
        });
      }
    });
  });
}

test('off by default: no prefix, no dialect', async () => {
  const t = await makeTestApp({});
  const r = await t.call('POST', '/vben/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  expect(r.status).toBe(404);
});
void PASSWORD;
