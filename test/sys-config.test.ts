import { beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../src/app.ts';
import { answerHash } from '../src/modules/auth/captcha.service.ts';
import { D1_START_MS, makeTestApp, perRuntime, type AnyTestApp } from './support/app.ts';
import { USER_PASSWORD, userWithCodes, type FixtureUser } from './support/rbac.ts';
import { expectGuarded, expectScenario } from './support/scenario.ts';
import { okData, rowsReadBy } from './support/std-modules.ts';

// Issue 27 item 2: system parameters (contract "Standard modules"), and the behaviours that read
// the built-in ones at run time: the captcha (GET /auth/captcha, login) and sysUser/add's initial
// password. On Bun and on D1.

let t: AnyTestApp;
let admin: string;
let nobody: FixtureUser;

/** The parameter with this key, as the API shows it. */
async function param(app: AnyTestApp, token: string, key: string) {
  const page = await okData(app, 'POST', '/app/sysConfig/page', token, { params: { key }, pageSize: 100 });
  const found = page.records.find((r: any) => r.key === key);
  if (!found) throw new Error(`no parameter ${key}`);
  return found;
}

/** Sets a parameter's value through the API. */
async function setParam(app: AnyTestApp, token: string, key: string, value: string) {
  const p = await param(app, token, key);
  return okData(app, 'POST', '/app/sysConfig/edit', token, { id: p.id, version: p.version, value });
}

/** A captcha with a known answer, stored the way issueCaptcha stores one. */
async function plantCaptcha(app: AnyTestApp, answer = 'ACDE') {
  const key = crypto.randomUUID();
  const now = app.clock.now();
  await app.exec(
    'INSERT INTO captchas (key, answer_hash, ip, expires_at, created_at) VALUES (?, ?, ?, ?, ?)',
    key,
    await answerHash(app.deps, key, answer),
    '127.0.0.1',
    new Date(now + 120_000).toISOString(),
    new Date(now).toISOString(),
  );
  return key;
}

perRuntime(
  (app, token) => {
    t = app;
    admin = token;
  },
  () => {
    beforeAll(async () => {
      nobody = await userWithCodes(t, [], `cfg_nobody_${t.runtime}`);
    });

    describe('parameters', () => {
      test('the built-in ones are seeded empty', async () => {
        const page = await okData(t, 'POST', '/app/sysConfig/page', admin, { params: { type: 'builtIn' }, sortField: 'id', sortOrder: 'asc' });
        expect(page.records.map((r: any) => [r.key, r.value, r.type])).toEqual([
          ['sys.account.captchaEnabled', '', 'builtIn'],
          ['sys.user.initPassword', '', 'builtIn'],
          ['sys.account.registerUser', '', 'builtIn'],
        ]);
      });

      test('permission codes: anonymous and forged 401, no code 403 (nothing changed), holder 200', async () => {
        const holder = await userWithCodes(t, ['sys:config:page', 'sys:config:detail', 'sys:config:add', 'sys:config:edit', 'sys:config:delete'], `cfg_holder_${t.runtime}`);
        const callers = { refused: nobody.token, granted: holder.token };
        let n = 0;
        const custom = async () => okData(t, 'POST', '/app/sysConfig/add', admin, { name: 'G', key: `guarded.k${++n}`, value: 'v' });
        await expectGuarded(t, { code: 'sys:config:page', method: 'POST', path: '/app/sysConfig/page', request: () => ({ body: {} }) }, callers, ['configs']);
        await expectGuarded(t, { code: 'sys:config:detail', method: 'GET', path: '/app/sysConfig/detail', request: () => ({ query: 'id=1' }) }, callers, ['configs']);
        await expectGuarded(t, { code: 'sys:config:add', method: 'POST', path: '/app/sysConfig/add', request: () => ({ body: { name: 'A', key: `guarded.add${++n}` } }) }, callers, ['configs']);
        await expectGuarded(t, { code: 'sys:config:edit', method: 'POST', path: '/app/sysConfig/edit', request: async () => ({ body: { id: (await custom()).id, version: 1, value: 'w' } }) }, callers);
        await expectGuarded(t, { code: 'sys:config:delete', method: 'POST', path: '/app/sysConfig/delete', request: async () => ({ body: { ids: [(await custom()).id] } }) }, callers);
        for (const token of [undefined, 'not-a-jwt-token-at-all']) expect((await t.call('GET', '/app/sysConfig/value?key=sys.account.captchaEnabled', { token })).status).toBe(401);
      });

      test('add, edit (version, 404, 409), value by key, delete; refusals change nothing', async () => {
        const added = await okData(t, 'POST', '/app/sysConfig/add', admin, { name: 'Theme', key: 'app.theme', value: 'dark', remark: 'UI' });
        expect(added).toMatchObject({ name: 'Theme', key: 'app.theme', value: 'dark', type: 'custom', remark: 'UI', version: 1 });
        expect(await okData(t, 'GET', `/app/sysConfig/detail?id=${added.id}`, admin)).toEqual(added);
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=app.theme', nobody.token)).toBe('dark');
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=APP.THEME', nobody.token)).toBe('dark');
        expect((await t.call('GET', '/app/sysConfig/value?key=app.nothing', { token: nobody.token })).status).toBe(404);
        expect((await t.call('GET', '/app/sysConfig/value?key=bad%20key', { token: nobody.token })).status).toBe(400);
        const tables = ['configs', 'cache_versions'];
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/add', token: admin, body: { name: 'Again', key: 'APP.theme' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/add', token: admin, body: { name: 'Typed', key: 'app.typed', type: 'builtIn' }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/add', token: admin, body: { name: 'Long', key: 'app.long', value: 'x'.repeat(501) }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: added.id, version: 2, value: 'light' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: added.id, version: 2, name: 'X' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: 999999, version: 1, value: 'x' }, status: 404, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: 999999, version: 1, name: 'x' }, status: 404, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: added.id, version: 1, key: 'sys.user.initPassword' }, status: 409, unchanged: tables });
        const edited = await okData(t, 'POST', '/app/sysConfig/edit', admin, { id: added.id, version: 1, value: 'light' });
        expect(edited).toMatchObject({ value: 'light', version: 2 });
        // Visible on the very next request, through another app instance (isolate) too.
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=app.theme', nobody.token)).toBe('light');
        await okData(t, 'POST', '/app/sysConfig/delete', admin, { ids: [added.id, 999999] });
        expect((await t.call('GET', '/app/sysConfig/value?key=app.theme', { token: nobody.token })).status).toBe(404);
      });

      test('value: served from the cache while nothing changed; a write is seen next, in another isolate too', async () => {
        await okData(t, 'POST', '/app/sysConfig/add', admin, { name: 'Cached', key: 'app.cached', value: 'one' });
        const read = rowsReadBy(t, /FROM configs WHERE NOT coalesce/);
        const other = createApp({ ...t.deps });
        const viaOther = async () => ((await (await other.request('/app/sysConfig/value?key=app.cached', { headers: { authorization: `Bearer ${nobody.token}` } })).json()) as any).data;
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=app.cached', nobody.token)).toBe('one');
        expect(await viaOther()).toBe('one');
        read.take();
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=app.cached', nobody.token)).toBe('one');
        expect(await viaOther()).toBe('one');
        expect(read.take()).toBe(0);
        await setParam(t, admin, 'app.cached', 'two');
        expect(await okData(t, 'GET', '/app/sysConfig/value?key=app.cached', nobody.token)).toBe('two');
        expect(await viaOther()).toBe('two');
        expect(read.take()).toBeGreaterThan(0);
      });

      test('built-in parameters: never deleted (400, nothing deleted, a custom one in the batch included), key fixed, values checked', async () => {
        const custom = await okData(t, 'POST', '/app/sysConfig/add', admin, { name: 'Mine', key: 'app.mine' });
        const builtIn = await param(t, admin, 'sys.account.registerUser');
        const tables = ['configs', 'cache_versions'];
        const refused = await expectScenario(t, { method: 'POST', path: '/app/sysConfig/delete', token: admin, body: { ids: [custom.id, builtIn.id] }, status: 400, unchanged: tables });
        expect(refused.json!.msg).toContain('sys.account.registerUser');
        const captcha = await param(t, admin, 'sys.account.captchaEnabled');
        const init = await param(t, admin, 'sys.user.initPassword');
        for (const [p, body] of [
          [captcha, { key: 'sys.account.captcha' }],
          [captcha, { value: 'yes' }],
          [captcha, { value: 'TRUE' }],
          [builtIn, { value: 'true' }],
          [init, { value: 'short' }],
          [init, { value: 'password' }],
        ] as const) {
          await expectScenario(t, { method: 'POST', path: '/app/sysConfig/edit', token: admin, body: { id: p.id, version: p.version, ...body }, status: 400, unchanged: tables });
        }
        // A custom parameter never takes a built-in key's rules by accident, but its own: anything goes.
        await okData(t, 'POST', '/app/sysConfig/edit', admin, { id: custom.id, version: 1, value: 'yes' });
        await okData(t, 'POST', '/app/sysConfig/delete', admin, { ids: [custom.id] });
      });

      test('the initial password is a secret: value only for who adds users or reads parameters; the op log never holds it', async () => {
        await setParam(t, admin, 'sys.user.initPassword', 'Welcome-Aboard-7');
        try {
          expect((await t.call('GET', '/app/sysConfig/value?key=sys.user.initPassword', { token: nobody.token })).status).toBe(403);
          const adder = await userWithCodes(t, ['sys:user:add'], `cfg_adder_${t.runtime}`);
          expect(await okData(t, 'GET', '/app/sysConfig/value?key=sys.user.initPassword', adder.token)).toBe('Welcome-Aboard-7');
          expect(await okData(t, 'GET', '/app/sysConfig/value?key=sys.user.initPassword', admin)).toBe('Welcome-Aboard-7');
          const logged = await t.rows<{ params: string }>(`SELECT params FROM op_log WHERE module = 'sysConfig' AND action = 'edit'`);
          expect(logged.length).toBeGreaterThan(0);
          expect(logged.some((r) => r.params.includes('Welcome-Aboard-7'))).toBe(false);
          // A refused edit of it (a malformed value) keeps the value out too; other parameters' values are kept.
          const init = await param(t, admin, 'sys.user.initPassword');
          expect((await t.call('POST', '/app/sysConfig/edit', { token: admin, body: { id: init.id, version: init.version, value: 'Leaked-Secret-99x', key: 'other.key' } })).status).toBe(400);
          expect((await t.rows<{ params: string }>(`SELECT params FROM op_log WHERE params LIKE '%Leaked-Secret-99x%'`)).length).toBe(0);
        } finally {
          await setParam(t, admin, 'sys.user.initPassword', '');
        }
      });
    });

    describe('sysUser/add without a password: sys.user.initPassword', () => {
      test('empty: 400 and nothing created; set: the user gets it (the policy still applies); empty again: 400', async () => {
        const tables = ['users', 'user_role', 'user_post'];
        const refused = await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: admin, body: { loginName: 'no_pass_1' }, status: 400, unchanged: tables });
        expect(refused.json!.msg).toContain('sys.user.initPassword');
        await setParam(t, admin, 'sys.user.initPassword', 'Welcome-Aboard-7');
        const user = await okData(t, 'POST', '/app/sysUser/add', admin, { loginName: 'no_pass_1' });
        expect(user.loginName).toBe('no_pass_1');
        expect(await t.login('no_pass_1', 'Welcome-Aboard-7')).toBeString();
        // A password sent wins over the parameter.
        await okData(t, 'POST', '/app/sysUser/add', admin, { loginName: 'with_pass_1', password: USER_PASSWORD });
        expect(await t.login('with_pass_1', USER_PASSWORD)).toBeString();
        // The policy: the initial password must not equal the new login name.
        await setParam(t, admin, 'sys.user.initPassword', 'Same-Name-As-User-1');
        const policy = await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: admin, body: { loginName: 'Same-Name-As-User-1' }, status: 400, unchanged: tables });
        expect(policy.json!.msg).toContain('login name');
        // The caller is judged first: without the code, 403 whatever the parameter says.
        await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: nobody.token, body: { loginName: 'no_pass_2' }, status: 403, unchanged: tables });
        await setParam(t, admin, 'sys.user.initPassword', '');
        await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: admin, body: { loginName: 'no_pass_3' }, status: 400, unchanged: tables });
      });
    });

    describe('the captcha switched at run time by sys.account.captchaEnabled', () => {
      test('configured off (CAPTCHA_ENABLED=false): empty follows it; true turns it on for GET /auth/captcha and login on the next request; false off again', async () => {
        expect((await t.call('GET', '/auth/captcha')).data.enabled).toBe(false);
        await setParam(t, admin, 'sys.account.captchaEnabled', 'true');
        try {
          const issued = await t.call('GET', '/auth/captcha');
          expect(issued.data).toMatchObject({ enabled: true, expiresIn: 120 });
          expect(issued.data.image).toStartWith('data:image/svg+xml;base64,');
          const missing = await t.call('POST', '/auth/login', { body: { loginName: nobody.loginName, password: USER_PASSWORD } });
          expect([missing.status, missing.json.msg]).toEqual([400, 'securityCode: the verification code is wrong or has expired']);
          const malformed = await t.call('POST', '/auth/login', { body: { loginName: nobody.loginName, password: USER_PASSWORD, codeKey: 'not-a-uuid', securityCode: 'x' } });
          expect([malformed.status, malformed.json.msg]).toEqual([400, 'codeKey: must be a UUID']);
          const key = await plantCaptcha(t);
          const right = await t.call('POST', '/auth/login', { body: { loginName: nobody.loginName, password: USER_PASSWORD, codeKey: key, securityCode: 'acde' } });
          expect(right.status).toBe(200);
        } finally {
          await setParam(t, admin, 'sys.account.captchaEnabled', 'false');
        }
        expect((await t.call('GET', '/auth/captcha')).data.enabled).toBe(false);
        const ignored = await t.call('POST', '/auth/login', { body: { loginName: nobody.loginName, password: USER_PASSWORD, codeKey: 'not-a-uuid', securityCode: 'whatever-it-holds' } });
        expect(ignored.status).toBe(200);
        await setParam(t, admin, 'sys.account.captchaEnabled', '');
      });

      test('configured on (CAPTCHA_ENABLED=true): false turns it off, the rate limit counts nothing while off; empty turns it back on', async () => {
        const on = await makeTestApp({ runtime: t.runtime, env: { CAPTCHA_ENABLED: 'true', CAPTCHA_PER_MINUTE: '3' } });
        const key = await plantCaptcha(on);
        const root = (await on.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42', codeKey: key, securityCode: 'ACDE' } })).data.token as string;
        expect((await on.call('GET', '/auth/captcha')).data.enabled).toBe(true);
        expect((await on.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42' } })).status).toBe(400);
        await setParam(on, root, 'sys.account.captchaEnabled', 'false');
        const countsBefore = await on.count('rate_limits');
        for (let i = 0; i < 5; i++) expect((await on.call('GET', '/auth/captcha')).data).toEqual({ codeKey: null, image: null, expiresIn: 0, enabled: false });
        expect(await on.count('rate_limits')).toBe(countsBefore);
        expect((await on.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42', codeKey: null, securityCode: '' } })).status).toBe(200);
        await setParam(on, root, 'sys.account.captchaEnabled', '');
        expect((await on.call('GET', '/auth/captcha')).data.enabled).toBe(true);
        expect((await on.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42' } })).status).toBe(400);
      }, D1_START_MS);
    });
  },
);
