import { beforeAll, describe, expect, test } from 'bun:test';
import { base32Decode } from '../src/core/base32.ts';
import { totpAt } from '../src/core/totp.ts';
import { beforeBatch, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { SoftAuthenticator } from './support/soft-authenticator.ts';

// The second factor end to end, through HTTP, on Bun and on D1 (contract: "Second factor"): TOTP
// enrolment, login with a challenge, replay, expiry, the lockout shared with passwords, recovery
// codes, disabling, passkeys with a software authenticator, mfaRequired roles, and resetMfa.
const ORIGIN = 'https://admin.example.test';
const PASSWORD = 'Amber-Falcon-73';
const STEP = 30_000;
const rt = (res: Response) => Number(res.headers.get('server-timing')?.match(/db;dur=[\d.]+;desc="(\d+) rt/)?.[1] ?? NaN);

for (const runtime of RUNTIMES) {
  describe(runtime, () => {
    let t: AnyTestApp;
    let admin: string;
    beforeAll(async () => {
      t = await makeTestApp({ runtime, env: { WEBAUTHN_RP_ID: 'admin.example.test', WEBAUTHN_ORIGINS: ORIGIN } });
      admin = await t.login();
    }, D1_START_MS);

    const post = (path: string, body: unknown, token?: string, ip?: string) =>
      t.call('POST', path, { body, token, headers: ip ? { 'x-test-ip': ip } : {} });
    const get = (path: string, token: string) => t.call('GET', path, { token });
    const code = (secret: Uint8Array) => totpAt(secret, t.clock.now());

    async function addUser(loginName: string, roleIds: number[] = []) {
      const r = await post('/app/sysUser/add', { loginName, password: PASSWORD, roleIds }, admin);
      expect(r.status).toBe(200);
      return r.data.id as number;
    }
    /** A user with TOTP on: their token (from before enrolment), secret and recovery codes. */
    async function enrolled(loginName: string) {
      const id = await addUser(loginName);
      const token = await t.login(loginName, PASSWORD);
      const start = await post('/app/sysLoginUser/mfa/totp/start', {}, token);
      expect(start.status).toBe(200);
      const secret = base32Decode(start.data.secret)!;
      const confirm = await post('/app/sysLoginUser/mfa/totp/confirm', { code: await code(secret) }, token);
      expect(confirm.status).toBe(200);
      t.clock.advance(STEP); // the confirming code is used up
      return { id, token, secret, recoveryCodes: confirm.data.recoveryCodes as string[] };
    }
    const challengeOf = async (loginName: string, ip?: string) => {
      const r = await post('/auth/login', { loginName, password: PASSWORD }, undefined, ip);
      expect(r.status).toBe(200);
      return r;
    };

    test('enrolment: a secret, an otpauth URI and a QR code; confirmed by a first code; 10 recovery codes; status never shows a secret', async () => {
      await addUser('ann');
      const token = await t.login('ann', PASSWORD);
      const start = await post('/app/sysLoginUser/mfa/totp/start', {}, token);
      expect(start.data.otpauthUri).toStartWith('otpauth://totp/Edge%20Admin:ann?secret=');
      expect(start.data.qrSvg).toStartWith('data:image/svg+xml;base64,');
      const secret = base32Decode(start.data.secret)!;
      expect((await get('/app/sysLoginUser/mfa/status', token)).data.totp).toBe(false);
      // Not active before it is confirmed: the password alone still logs in.
      expect((await challengeOf('ann')).data.token).toBeString();
      expect((await post('/app/sysLoginUser/mfa/totp/confirm', { code: '000000' }, token)).status).toBe(400);
      const confirm = await post('/app/sysLoginUser/mfa/totp/confirm', { code: await code(secret) }, token);
      expect(confirm.status).toBe(200);
      expect(confirm.data.recoveryCodes).toHaveLength(10);
      // A second start while active changes nothing.
      expect((await post('/app/sysLoginUser/mfa/totp/start', {}, token)).status).toBe(400);
      const status = await get('/app/sysLoginUser/mfa/status', token);
      expect(status.data).toEqual({ totp: true, passkeys: [], recoveryCodesLeft: 10, required: false });
      // No secret, sealed box, code or hash anywhere in what the user or an admin reads back.
      const stored = await t.row<{ secret: string }>('SELECT secret FROM mfa_totp WHERE user_id = (SELECT id FROM users WHERE login_name = ?)', 'ann');
      expect(stored!.secret).toStartWith('v1.');
      expect(stored!.secret).not.toContain(start.data.secret);
      const detail = await get(`/app/sysUser/detail?id=${(await t.row<{ id: number }>("SELECT id FROM users WHERE login_name = 'ann'"))!.id}`, admin);
      expect(detail.data.mfaEnabled).toBe(true);
      for (const text of [JSON.stringify(status.json), JSON.stringify(detail.json)]) {
        expect(text).not.toContain(start.data.secret);
        expect(text).not.toContain(stored!.secret);
        expect(text).not.toContain(confirm.data.recoveryCodes[0]);
      }
      // The op log has the calls, not the code.
      const ops = await t.rows<{ params: string }>("SELECT params FROM op_log WHERE path LIKE '/app/sysLoginUser/mfa/%'");
      expect(ops.length).toBeGreaterThanOrEqual(3);
      for (const o of ops) expect(o.params).not.toMatch(/\d{6}/);
    });

    test('login: the password answers a challenge and no session; verify with a code → token; the login log names the factor; ≤ 2 round trips each', async () => {
      const { id, secret } = await enrolled('bea');
      const sessions = await t.count('sessions');
      const first = await challengeOf('bea');
      expect(first.data).toMatchObject({ mfa: true, token: null, methods: ['totp', 'recovery'] });
      expect(await t.count('sessions')).toBe(sessions);
      const verify = await post('/auth/login/verify', { challenge: first.data.challenge, code: await code(secret) });
      expect(verify.status).toBe(200);
      expect(verify.data).toMatchObject({ tokenType: 'Bearer', factor: 'totp', recoveryCodesLeft: null });
      if (runtime === 'd1') {
        expect(rt(first.res)).toBeLessThanOrEqual(2);
        expect(rt(verify.res)).toBeLessThanOrEqual(2);
      }
      expect((await get('/app/sysLoginUser/getLoginUserInformation', verify.data.token)).status).toBe(200);
      const log = await t.rows<{ msg: string; factor: string | null; status: string }>('SELECT msg, factor, status FROM login_log WHERE user_id = ? ORDER BY id DESC LIMIT 2', id);
      expect(log[0]).toMatchObject({ status: 'success', factor: 'totp' });
      expect(log[1]).toMatchObject({ status: 'success', factor: null, msg: 'Password accepted; second factor required' });
      const page = await post('/app/sysLoginLog/page', { params: { loginName: 'bea' } }, admin);
      expect(page.data.records[0].factor).toBe('totp');
    });

    test('a code works once (replay refused), a challenge once, and not after 5 minutes', async () => {
      const { secret } = await enrolled('cid');
      const c1 = await challengeOf('cid');
      const typed = await code(secret);
      expect((await post('/auth/login/verify', { challenge: c1.data.challenge, code: typed })).status).toBe(200);
      // The same challenge again, with a fresh code: used.
      t.clock.advance(STEP);
      const reused = await post('/auth/login/verify', { challenge: c1.data.challenge, code: await code(secret) });
      expect(reused.status).toBe(401);
      expect(reused.json.msg).toContain('expired or was already used');
      // The same code on a new challenge, still inside its ±1 step window: refused.
      t.clock.advance(-STEP);
      const c2 = await challengeOf('cid');
      const replay = await post('/auth/login/verify', { challenge: c2.data.challenge, code: typed });
      expect(replay.status).toBe(401);
      t.clock.advance(STEP);
      // Expired: 5 minutes later the challenge is gone, whatever the code.
      const c3 = await challengeOf('cid');
      t.clock.advance(5 * 60_000 + 1);
      const late = await post('/auth/login/verify', { challenge: c3.data.challenge, code: await code(secret) });
      expect(late.status).toBe(401);
      expect(late.json.msg).toContain('expired');
      // A forged token naming another login name finds nothing.
      const forged = `${c3.data.challenge.split('.')[0]}.${Buffer.from('admin').toString('base64url')}`;
      expect((await post('/auth/login/verify', { challenge: forged, code: await code(secret) })).status).toBe(401);
      expect((await post('/auth/login/verify', { challenge: c3.data.challenge, code: '12345', recoveryCode: 'x' })).status).toBe(400);
    });

    test('wrong codes count toward the same lockout as passwords, per name across addresses', async () => {
      const { secret } = await enrolled('dov');
      // Two wrong passwords, then three wrong codes from other addresses: five failures for the name.
      for (const ip of ['10.0.0.1', '10.0.0.2']) expect((await post('/auth/login', { loginName: 'dov', password: 'wrong-password-1' }, undefined, ip)).status).toBe(401);
      for (const ip of ['10.0.0.3', '10.0.0.4', '10.0.0.5']) {
        const c = await challengeOf('dov', ip);
        const wrong = await post('/auth/login/verify', { challenge: c.data.challenge, code: '000000' }, undefined, ip);
        expect(wrong.status).toBe(401);
      }
      // Locked: the right password, then a right code, from yet another address: 429.
      const locked = await post('/auth/login', { loginName: 'dov', password: PASSWORD }, undefined, '10.0.0.9');
      expect(locked.status).toBe(429);
      expect(locked.res.headers.get('retry-after')).toBeTruthy();
      t.clock.advance(10 * 60_000 + 1);
      const c = await challengeOf('dov', '10.0.0.9');
      expect((await post('/auth/login/verify', { challenge: c.data.challenge, code: await code(secret) }, undefined, '10.0.0.9')).status).toBe(200);
    });

    test('recovery codes: single use, counted, logged with how many remain', async () => {
      const { id, recoveryCodes } = await enrolled('eli');
      const c1 = await challengeOf('eli');
      const used = await post('/auth/login/verify', { challenge: c1.data.challenge, recoveryCode: recoveryCodes[0]!.toUpperCase() });
      expect(used.status).toBe(200);
      expect(used.data).toMatchObject({ factor: 'recovery', recoveryCodesLeft: 9 });
      const log = await t.row<{ msg: string; factor: string }>("SELECT msg, factor FROM login_log WHERE user_id = ? AND status = 'success' ORDER BY id DESC LIMIT 1", id);
      expect(log).toEqual({ msg: 'Login succeeded (second factor: recovery code) (9 recovery codes left)', factor: 'recovery' });
      const c2 = await challengeOf('eli');
      expect((await post('/auth/login/verify', { challenge: c2.data.challenge, recoveryCode: recoveryCodes[0] })).status).toBe(401);
      expect((await get('/app/sysLoginUser/mfa/status', used.data.token)).data.recoveryCodesLeft).toBe(9);
    });

    test('regenerating recovery codes needs a current code; the old ones stop working', async () => {
      const { token, secret, recoveryCodes } = await enrolled('fay');
      expect((await post('/app/sysLoginUser/mfa/recoveryCodes', { code: '000000' }, token)).status).toBe(400);
      const fresh = await post('/app/sysLoginUser/mfa/recoveryCodes', { code: await code(secret) }, token);
      expect(fresh.status).toBe(200);
      expect(fresh.data.recoveryCodes).toHaveLength(10);
      const c = await challengeOf('fay');
      expect((await post('/auth/login/verify', { challenge: c.data.challenge, recoveryCode: recoveryCodes[1] })).status).toBe(401);
      expect((await post('/auth/login/verify', { challenge: c.data.challenge, recoveryCode: fresh.data.recoveryCodes[1] })).status).toBe(200);
    });

    test('disable needs the password and a current code; nothing changes otherwise', async () => {
      const { token, secret } = await enrolled('gus');
      expect((await post('/app/sysLoginUser/mfa/totp/disable', { password: 'not-the-password', code: await code(secret) }, token)).status).toBe(400);
      expect((await post('/app/sysLoginUser/mfa/totp/disable', { password: PASSWORD, code: '000000' }, token)).status).toBe(400);
      expect((await post('/app/sysLoginUser/mfa/totp/disable', { password: PASSWORD }, token)).status).toBe(400);
      expect((await challengeOf('gus')).data.mfa).toBe(true);
      t.clock.advance(STEP);
      expect((await post('/app/sysLoginUser/mfa/totp/disable', { password: PASSWORD, code: await code(secret) }, token)).status).toBe(200);
      expect((await challengeOf('gus')).data.token).toBeString();
      expect((await get('/app/sysLoginUser/mfa/status', token)).data).toEqual({ totp: false, passkeys: [], recoveryCodesLeft: 0, required: false });
    });

    test('a password reset during the challenge ends it, and does not remove the factor', async () => {
      const { id, secret } = await enrolled('hal');
      const c = await challengeOf('hal');
      expect((await post('/app/sysUser/resetPassword', { id, newPassword: 'Brand-New-Pass-9' }, admin)).status).toBe(200);
      expect((await post('/auth/login/verify', { challenge: c.data.challenge, code: await code(secret) })).status).toBe(401);
      const after = await post('/auth/login', { loginName: 'hal', password: 'Brand-New-Pass-9' });
      expect(after.data).toMatchObject({ mfa: true, token: null });
    });

    test('passkeys: register with the software authenticator, log in with one; wrong origin, challenge or counter refused', async () => {
      const id = await addUser('ivy');
      const token = await t.login('ivy', PASSWORD);
      const auth = await SoftAuthenticator.create();
      // Another origin (a phishing page) cannot register.
      const o0 = await post('/app/sysLoginUser/mfa/passkey/options', {}, token);
      const bad = await post('/app/sysLoginUser/mfa/passkey/register', { response: await auth.register(o0.data, 'https://evil.example.test') }, token);
      expect(bad.status).toBe(400);
      const options = await post('/app/sysLoginUser/mfa/passkey/options', {}, token);
      expect(options.data.rp.id).toBe('admin.example.test');
      const response = await auth.register(options.data, ORIGIN);
      const reg = await post('/app/sysLoginUser/mfa/passkey/register', { response, name: 'YubiKey' }, token);
      expect(reg.status).toBe(200);
      expect(reg.data.passkey).toMatchObject({ name: 'YubiKey', lastUsedAt: null });
      expect(reg.data.recoveryCodes).toHaveLength(10); // the first factor brings recovery codes
      // The same options answered twice: used.
      expect((await post('/app/sysLoginUser/mfa/passkey/register', { response }, token)).status).toBe(400);
      const status = await get('/app/sysLoginUser/mfa/status', token);
      expect(status.data.passkeys).toHaveLength(1);
      expect(JSON.stringify(status.json)).not.toContain('publicKey');

      const c = await challengeOf('ivy');
      expect(c.data.methods).toEqual(['passkey', 'recovery']);
      const verifyWith = async (tweak: (o: any) => Promise<unknown>) => {
        const o = await post('/auth/login/passkeyOptions', { challenge: c.data.challenge });
        expect(o.status).toBe(200);
        return post('/auth/login/verify', { challenge: c.data.challenge, passkey: await tweak(o.data) });
      };
      expect((await verifyWith((o) => auth.assert(o, 'https://evil.example.test'))).status).toBe(401);
      expect((await verifyWith((o) => auth.assert(o, ORIGIN, { challenge: Buffer.from('stale').toString('base64url') }))).status).toBe(401);
      // A cloned authenticator (its counter behind the stored one).
      await t.exec('UPDATE mfa_passkeys SET counter = 5 WHERE user_id = ?', id);
      auth.signCount = 3;
      expect((await verifyWith((o) => auth.assert(o, ORIGIN))).status).toBe(401);
      auth.signCount = 10;
      const ok = await verifyWith((o) => auth.assert(o, ORIGIN));
      expect(ok.status).toBe(200);
      expect(ok.data.factor).toBe('passkey');
      expect((await t.row<{ counter: number }>('SELECT counter FROM mfa_passkeys WHERE user_id = ?', id))!.counter).toBe(11);
      // Removing the only passkey removes the factor (and its recovery codes).
      const pk = status.data.passkeys[0].id;
      // Only one's own: another user's delete finds nothing (404), the passkey stays.
      await addUser('ivo');
      expect((await post('/app/sysLoginUser/mfa/passkey/delete', { id: pk }, await t.login('ivo', PASSWORD))).status).toBe(404);
      expect((await post('/app/sysLoginUser/mfa/passkey/delete', { id: pk + 1000 }, token)).status).toBe(404);
      expect((await post('/app/sysLoginUser/mfa/passkey/delete', { id: pk }, token)).status).toBe(200);
      expect((await challengeOf('ivy')).data.token).toBeString();
      expect((await get('/app/sysLoginUser/mfa/status', token)).data.recoveryCodesLeft).toBe(0);
    });

    test('mfaRequired: a holder without a factor may only enrol; the flag needs its own code; a change applies on the next request', async () => {
      const role = await post('/app/sysRole/add', { name: 'Guarded', code: 'guarded', dataScope: 'all', mfaRequired: true }, admin);
      expect(role.status).toBe(200);
      expect(role.data.mfaRequired).toBe(true);
      await addUser('jon', [role.data.id]);
      const token = await t.login('jon', PASSWORD);
      const refused = await post('/app/sysLoginUser/updateInfo', { nickName: 'Jon' }, token);
      expect(refused.status).toBe(403);
      expect(refused.json.msg).toContain('Second factor required');
      expect((await get('/app/sysNotice/latest', token)).status).toBe(403); // a read, no code needed
      expect((await get('/app/sysLoginUser/getLoginUserInformation', token)).status).toBe(200);
      expect((await get('/app/sysLoginUser/mfa/status', token)).data.required).toBe(true);
      const start = await post('/app/sysLoginUser/mfa/totp/start', {}, token);
      const secret = base32Decode(start.data.secret)!;
      expect((await post('/app/sysLoginUser/mfa/totp/confirm', { code: await code(secret) }, token)).status).toBe(200);
      expect((await post('/app/sysLoginUser/updateInfo', { nickName: 'Jon' }, token)).status).toBe(200);

      // A role made mfaRequired while its holder is logged in: their next request is restricted.
      const plain = await post('/app/sysRole/add', { name: 'Plain', code: 'plain' }, admin);
      await addUser('kim', [plain.data.id]);
      const kim = await t.login('kim', PASSWORD);
      expect((await post('/app/sysLoginUser/updateInfo', { nickName: 'Kim' }, kim)).status).toBe(200);
      const edit = await post('/app/sysRole/edit', { id: plain.data.id, version: plain.data.version, mfaRequired: true }, admin);
      expect(edit.status).toBe(200);
      expect((await post('/app/sysLoginUser/updateInfo', { nickName: 'Kim' }, kim)).status).toBe(403);
      expect((await get('/app/sysNotice/latest', kim)).status).toBe(403);
      expect((await post('/auth/logout', {}, kim)).status).toBe(200);

      // The flag set between the caller's judgement and their write: the write's own guard refuses it.
      const later = await post('/app/sysRole/add', { name: 'Later', code: 'later' }, admin);
      const lenId = await addUser('len', [later.data.id]);
      const len = await t.login('len', PASSWORD);
      beforeBatch(t, 1, 'UPDATE roles SET mfa_required = 1 WHERE id = ?', later.data.id);
      const raced = await post('/app/sysLoginUser/updateInfo', { nickName: 'Len' }, len);
      expect(raced.status).toBe(403);
      expect((await t.row<{ nick_name: string }>('SELECT nick_name FROM users WHERE id = ?', lenId))!.nick_name).not.toBe('Len');
    });

    test('a delegated admin needs sys:role:requireMfa, and cannot set it on a role held outside their scope', async () => {
      const menus = await t.rows<{ id: number; permission: string }>("SELECT id, permission FROM menus WHERE permission IN ('sys:role:add', 'sys:role:edit', 'sys:role:requireMfa')");
      const idOf = (p: string) => menus.find((m) => m.permission === p)!.id;
      const mgr = await post('/app/sysRole/add', { name: 'Role admin', code: 'roleAdmin' }, admin); // scope: self
      await post('/app/sysRole/grantMenu', { roleId: mgr.data.id, menuIds: [idOf('sys:role:add'), idOf('sys:role:edit')] }, admin);
      await addUser('lea', [mgr.data.id]);
      const lea = await t.login('lea', PASSWORD);
      const before = await t.count('roles');
      const noCode = await post('/app/sysRole/add', { name: 'X', code: 'xRole', mfaRequired: true }, lea);
      expect(noCode.status).toBe(403);
      expect(noCode.json.msg).toContain('sys:role:requireMfa');
      expect(await t.count('roles')).toBe(before);
      await post('/app/sysRole/grantMenu', { roleId: mgr.data.id, menuIds: [idOf('sys:role:add'), idOf('sys:role:edit'), idOf('sys:role:requireMfa')] }, admin);
      const own = await post('/app/sysRole/add', { name: 'Y', code: 'yRole', mfaRequired: true }, lea);
      expect(own.status).toBe(200);
      // A role held by someone outside Lea's scope (self): 403, unchanged.
      const other = await post('/app/sysRole/add', { name: 'Z', code: 'zRole' }, admin);
      await addUser('max', [other.data.id]);
      const edit = await post('/app/sysRole/edit', { id: other.data.id, version: other.data.version, mfaRequired: true }, lea);
      expect(edit.status).toBe(403);
      expect((await t.row<{ mfa_required: number }>('SELECT mfa_required FROM roles WHERE id = ?', other.data.id))!.mfa_required).toBe(0);
    });

    test('resetMfa: removes the factors and ends the sessions; its code, containment and own-account rules', async () => {
      const { id } = await enrolled('ned');
      const c = await challengeOf('ned');
      expect(c.data.mfa).toBe(true);
      const self = await t.row<{ id: number }>("SELECT id FROM users WHERE login_name = 'admin'");
      expect((await post('/app/sysUser/resetMfa', { id: self!.id }, admin)).status).toBe(400);
      // A user without the code: 403, nothing changed.
      await addUser('ora');
      const ora = await t.login('ora', PASSWORD);
      expect((await post('/app/sysUser/resetMfa', { id }, ora)).status).toBe(403);
      expect((await t.row<{ mfa_enabled: number }>('SELECT mfa_enabled FROM users WHERE id = ?', id))!.mfa_enabled).toBe(1);
      // A delegated holder of sys:user:resetMfa (scope all) cannot reset a super admin's factors.
      const menu = (await t.row<{ id: number }>("SELECT id FROM menus WHERE permission = 'sys:user:resetMfa'"))!.id;
      const helpdesk = await post('/app/sysRole/add', { name: 'Helpdesk', code: 'helpdesk', dataScope: 'all' }, admin);
      await post('/app/sysRole/grantMenu', { roleId: helpdesk.data.id, menuIds: [menu] }, admin);
      await addUser('pia', [helpdesk.data.id]);
      const pia = await t.login('pia', PASSWORD);
      const onSuper = await post('/app/sysUser/resetMfa', { id: self!.id }, pia);
      expect(onSuper.status).toBe(403);
      expect(onSuper.json.msg).toContain('super administrator');
      const reset = await post('/app/sysUser/resetMfa', { id }, admin);
      expect(reset.status).toBe(200);
      expect((await get(`/app/sysUser/detail?id=${id}`, admin)).data.mfaEnabled).toBe(false);
      expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM mfa_challenges WHERE user_id = ?', id))!.n).toBe(0);
      expect((await post('/auth/login/verify', { challenge: c.data.challenge, recoveryCode: 'zzzz-zzzz-zzzz' })).status).toBe(401);
      expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM sessions WHERE user_id = ? AND revoked_at IS NULL', id))!.n).toBe(0);
      expect((await challengeOf('ned')).data.token).toBeString();
      const op = await t.row<{ action: string; status: number }>("SELECT action, status FROM op_log WHERE path = '/app/sysUser/resetMfa' ORDER BY id DESC LIMIT 1");
      expect(op).toMatchObject({ status: 200 });
    });
  });
}
