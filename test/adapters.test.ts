// The template adapters in examples/adapters/ against a live Bun server: each maps our login, user
// information, codes and menu tree into the shapes vue-vben-admin, RuoYi-Vue3 and soybean-admin read.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, loginUserInformation, type LoginUserInformation } from '../src/client.ts';
import { ruoyiBody, ruoyiInfo, ruoyiLogin, ruoyiPageRequest, ruoyiRouters, ruoyiRows, type RuoyiRoute } from '../examples/adapters/ruoyi.ts';
import { routeKey, soybeanLogin, soybeanUserInfo, soybeanUserRoutes, type SoybeanMenuRoute } from '../examples/adapters/soybean.ts';
import { vbenAccessCodes, vbenLogin, vbenMenus, vbenUserInfo, type VbenRoute } from '../examples/adapters/vben.ts';
import type { LoginData } from '../examples/adapters/common.ts';
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

describe('vue-vben-admin', () => {
  test('login, user info, codes', () => {
    expect(vbenLogin(login)).toEqual({ accessToken: login.token });
    expect(vbenUserInfo(admin, login.token)).toMatchObject({ userId: '1', username: 'admin', homePath: '/user/list', token: login.token, roles: ['superAdmin'] });
    expect(vbenAccessCodes(clerk).sort()).toEqual(['sys:user:detail', 'sys:user:page']);
  });

  test('menus: unique names, layouts at the root, views below, meta from the node', () => {
    const routes = vbenMenus(admin.menus);
    const all = walk<VbenRoute>(routes);
    expect(new Set(all.map((r) => r.name)).size).toBe(all.length);
    expect(routes[0]).toMatchObject({ name: 'UserManagement', path: '/user', component: 'BasicLayout', redirect: '/user/list', meta: { title: 'User management', icon: 'user', order: 1 } });
    expect(routes[0]!.children![0]).toMatchObject({ name: 'Users', path: '/user/list', component: '/user/UserList', meta: { hideInMenu: false, keepAlive: false } });
    expect(vbenMenus(clerk.menus).map((r) => r.name)).toEqual(['UserManagement']);
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
