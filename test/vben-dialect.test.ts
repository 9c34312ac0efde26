import { beforeAll, describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';

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
  });
}

test('off by default: no prefix, no dialect', async () => {
  const t = await makeTestApp({});
  const r = await t.call('POST', '/vben/auth/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
  expect(r.status).toBe(404);
});
void PASSWORD;
