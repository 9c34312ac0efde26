// The template adapters in examples/adapters/ against a live Bun server: each maps our login, user
// information, codes and menu tree into the shapes RuoYi-derived templates and soybean-admin read.
// (vue-vben-admin needs none: the vben dialect, docs/vben.md.) That the files are self-contained
// and type-check on their own: test/adapters-self-contained.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, loginUserInformation, type LoginUserInformation } from '../src/client.ts';
import { ruoyiBody, ruoyiInfo, ruoyiLogin, ruoyiPageRequest, ruoyiRouters, ruoyiRows, type RuoyiRoute } from '../examples/adapters/ruoyi.ts';
import { routeKey, soybeanLogin, soybeanUserInfo, soybeanUserRoutes, type SoybeanMenuRoute } from '../examples/adapters/soybean.ts';
import { loginWithSecondFactor, type LoginChallenge, type LoginData, type LoginUserInformation as AdapterInfo, type PostData } from '../examples/adapters/common.ts';
import { base32Decode } from '../src/core/base32.ts';
import { totpAt } from '../src/core/totp.ts';
import { bunServer, E2E_ADMIN_PASSWORD, type Target } from './e2e/servers.ts';

const dir = mkdtempSync(join(tmpdir(), 'edge-adapters-'));
let server: Target;
let token = '';
let login: LoginData;
let admin: LoginUserInformation;
let clerk: LoginUserInformation;

async function signIn(api: ReturnType<typeof createClient>, loginName: string, password: string) {
  const res = await api.auth.login.$post({ json: { loginName, password } });
  if (!res.ok) throw new Error((await res.json()).msg);
  const data = (await res.json()).data;
  if (data.token === null) throw new Error(`${loginName} has a second factor: not expected here`);
  return data;
}

beforeAll(async () => {
  server = await bunServer(join(dir, 'srv'), false);
  const api = createClient(server.baseUrl, () => token);
  login = await signIn(api, 'admin', E2E_ADMIN_PASSWORD);
  token = login.token;
  const info = await api.app.sysLoginUser.getLoginUserInformation.$get();
  if (!info.ok) throw new Error('info');
  admin = loginUserInformation(await info.json());
  // A clerk who may only page users: one branch of the tree, two codes.
  const role = await api.app.sysRole.add.$post({ json: { name: 'Clerk', code: 'clerk' } });
  if (!role.ok) throw new Error('role');
  const roleId = (await role.json()).data.id;
  const granted = await api.app.sysRole.grantMenu.$post({ json: { roleId, menuIds: [3, 4] } });
  expect(granted.status).toBe(200);
  const user = await api.app.sysUser.add.$post({ json: { loginName: 'clerk', password: 'Quiet-Lantern-31', roleIds: [roleId] } });
  expect(user.status).toBe(200);
  let clerkToken = '';
  const clerkApi = createClient(server.baseUrl, () => clerkToken);
  clerkToken = (await signIn(clerkApi, 'clerk', 'Quiet-Lantern-31')).token;
  const ci = await clerkApi.app.sysLoginUser.getLoginUserInformation.$get();
  if (!ci.ok) throw new Error('clerk info');
  clerk = loginUserInformation(await ci.json());
}, 60_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const walk = <T extends { children?: T[] }>(routes: T[]): T[] => routes.flatMap((r) => [r, ...walk(r.children ?? [])]);

describe('common.ts', () => {
  test("the API's own types fit the adapters' copies (tsc refuses this file when they stop fitting)", () => {
    const fits: AdapterInfo = admin;
    const clerkFits: AdapterInfo = clerk;
    expect(fits.menus.length).toBeGreaterThan(clerkFits.menus.length);
  });
});

describe('RuoYi-Vue3', () => {
  test('login, getInfo (super admin as *:*:* and admin), envelope with code', () => {
    expect(ruoyiLogin(login)).toEqual({ code: 200, msg: 'SUCCESS', token: login.token });
    expect(ruoyiInfo(admin)).toMatchObject({ code: 200, user: { userId: 1, userName: 'admin' }, roles: ['admin'], permissions: ['*:*:*'] });
    expect(ruoyiInfo(clerk).roles).toEqual(['clerk']);
    expect(ruoyiBody({ status: 401, msg: 'Not logged in', data: null, traceId: 'x' })).toEqual({ code: 401, msg: 'Not logged in', data: null });
  });

  test('getRouters: Layout at the root, relative child paths, noCache from keepAlive', () => {
    const routes = ruoyiRouters(admin.menus);
    expect(routes[0]).toMatchObject({ name: 'UserManagement', path: '/user', component: 'Layout', alwaysShow: true, redirect: 'noRedirect', hidden: false });
    expect(routes[0]!.children![0]).toMatchObject({ name: 'Users', path: 'list', component: 'user/UserList', meta: { title: 'Users', noCache: true } });
    expect(walk<RuoyiRoute>(routes).every((r) => r.name.length > 0)).toBe(true);
  });

  test('a RuoYi list query pages through our API and comes back as {total, rows}', async () => {
    const body = ruoyiPageRequest({ pageNum: 1, pageSize: 5, userName: 'adm' }, { userName: 'loginName' });
    expect(body).toEqual({ pageNo: 1, pageSize: 5, params: { loginName: 'adm' } });
    const api = createClient(server.baseUrl, () => token);
    const res = await api.app.sysUser.page.$post({ json: body });
    if (!res.ok) throw new Error('page');
    const rows = ruoyiRows(await res.json());
    expect(rows).toMatchObject({ code: 200, total: 1 });
    expect(rows.rows[0]!.loginName).toBe('admin');
  });
});

describe('soybean-admin', () => {
  test('login token, user info', () => {
    expect(soybeanLogin(login)).toEqual({ token: login.token, refreshToken: login.token });
    expect(soybeanUserInfo(admin)).toMatchObject({ userId: '1', userName: 'admin', roles: ['R_SUPER'], buttons: ['*'] });
    expect(soybeanUserInfo(clerk).buttons.sort()).toEqual(['sys:user:detail', 'sys:user:page']);
  });

  test('user routes: keys from paths, layout.base at the root, views below, home', () => {
    const { routes, home } = soybeanUserRoutes(admin);
    expect(home).toBe('user_list');
    expect(routes[0]).toMatchObject({ id: '1', name: 'user', path: '/user', component: 'layout.base', redirect: '/user/list', meta: { title: 'User management', icon: 'user', order: 1 } });
    expect(routes[0]!.children![0]).toMatchObject({ name: 'user_list', component: 'view.user_list', meta: { keepAlive: false, hideInMenu: false } });
    const all = walk<SoybeanMenuRoute>(routes);
    expect(new Set(all.map((r) => r.name)).size).toBe(all.length);
    expect(routeKey('/permission/role')).toBe('permission_role');
  });
});

describe('login recipe with a second factor (common.ts)', () => {
  /** A template's request function: the envelope's data, or a throw with its msg. */
  const postAs = async <T>(path: string, body: unknown, bearer?: string) => {
    const res = await fetch(server.baseUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
      body: JSON.stringify(body),
    });
    const e = (await res.json()) as { status: number; msg: string; data: T };
    if (e.status !== 200) throw new Error(e.msg);
    return e.data;
  };
  const post: PostData = (path, body) => postAs(path, body);
  const noFactor = async (): Promise<never> => {
    throw new Error('askFactor called for an account without a second factor');
  };
  let secret: Uint8Array;
  let recovery: string[];
  const challenges: LoginChallenge[] = [];

  beforeAll(async () => {
    const api = createClient(server.baseUrl, () => token);
    expect((await api.app.sysUser.add.$post({ json: { loginName: 'ann', password: 'Amber-Kettle-58' } })).status).toBe(200);
    const ann = (await loginWithSecondFactor(post, { loginName: 'ann', password: 'Amber-Kettle-58' }, noFactor)).token;
    secret = base32Decode((await postAs<{ secret: string }>('/app/sysLoginUser/mfa/totp/start', {}, ann)).secret)!;
    recovery = (await postAs<{ recoveryCodes: string[] }>('/app/sysLoginUser/mfa/totp/confirm', { code: await totpAt(secret, Date.now()) }, ann)).recoveryCodes;
    expect(recovery.length).toBe(10);
  });

  test('no factor: the token at once, askFactor never called', async () => {
    const data = await loginWithSecondFactor(post, { loginName: 'admin', password: E2E_ADMIN_PASSWORD }, noFactor);
    expect(soybeanLogin(data).token).toBe(data.token);
  });

  test('TOTP: askFactor gets the challenge; the verified login maps like any other', async () => {
    const data = await loginWithSecondFactor(post, { loginName: 'ann', password: 'Amber-Kettle-58' }, async (c) => {
      challenges.push(c);
      return { code: await totpAt(secret, Date.now() + 30_000) };
    });
    expect(challenges[0]).toMatchObject({ mfa: true, token: null, methods: ['totp', 'recovery'] });
    expect(data).toMatchObject({ tokenType: 'Bearer', factor: 'totp', recoveryCodesLeft: null });
    expect(ruoyiLogin(data).token).toBe(data.token);
    expect(soybeanLogin(data).token).toBe(data.token);
    const info = await fetch(`${server.baseUrl}/app/sysLoginUser/getLoginUserInformation`, { headers: { authorization: `Bearer ${data.token}` } });
    expect(((await info.json()) as { data: LoginUserInformation }).data.user.loginName).toBe('ann');
  });

  test('a recovery code: how many are left; a wrong code is the server message', async () => {
    const data = await loginWithSecondFactor(post, { loginName: 'ann', password: 'Amber-Kettle-58' }, async () => ({ recoveryCode: recovery[0]! }));
    expect(data).toMatchObject({ factor: 'recovery', recoveryCodesLeft: 9 });
    const again = loginWithSecondFactor(post, { loginName: 'ann', password: 'Amber-Kettle-58' }, async () => ({ recoveryCode: recovery[0]! }));
    await expect(again).rejects.toThrow('The second-factor code is wrong or has expired');
  });
});
