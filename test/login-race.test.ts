import { describe, expect, test } from 'bun:test';
import type { PasswordHasher } from '../src/core/ports.ts';
import { D1_START_MS, RUNTIMES, fastHasher, makeTestApp } from './support/app.ts';

// The login races of login.test.ts on every runtime, D1 included (a D1 batch is the transaction
// that makes the session insert conditional on what the login checked). The admin write lands
// DURING the password hash: the hasher's verify waits for it, and the test asserts it landed.
const PASSWORD = 'Racing-Login-Pass-58';

for (const runtime of RUNTIMES) {
  describe(`a login racing a write to its user gets no usable token (${runtime})`, () => {
    const cases: [string, string, (id: number) => Record<string, unknown>, number][] = [
      ['a password reset', '/app/sysUser/resetPassword', (id) => ({ id, newPassword: 'Brand-New-Pass-64' }), 401],
      ['a disable', '/app/sysUser/changeStatus', (id) => ({ id, status: 'disabled' }), 403],
      ['a delete', '/app/sysUser/delete', (id) => ({ ids: [id] }), 401],
    ];
    test(
      'reset → 401, disable → 403, delete → 401; a failure row each, no session, never 500',
      async () => {
        const real = fastHasher();
        let during: ((phc: string) => Promise<void>) | null = null;
        const hasher: PasswordHasher = { ...real, verify: async (h, p) => (during && (await during(h)), real.verify(h, p)) };
        const t = await makeTestApp({ runtime, hasher });
        const admin = await t.login();
        for (const [what, path, body, status] of cases) {
          const loginName = `racer-${path.split('/').at(-1)}`;
          const add = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName, password: PASSWORD } });
          expect(add.status).toBe(200);
          const id = add.data.id as number;
          const { password_hash: hash } = (await t.row<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', id))!;
          let landed = false;
          during = async (h) => {
            if (h !== hash || landed) return;
            const w = await t.call('POST', path, { token: admin, body: body(id) });
            expect({ what, status: w.status }).toEqual({ what, status: 200 });
            landed = true;
          };
          const r = await t.call('POST', '/auth/login', { body: { loginName, password: PASSWORD } });
          during = null;
          expect({ what, landed, status: r.status }).toEqual({ what, landed: true, status });
          expect(await t.row('SELECT count(*) AS n FROM sessions WHERE user_id = ?', id)).toEqual({ n: 0 });
          expect(await t.row('SELECT status, msg, user_id FROM login_log WHERE trace_id = ?', r.json.traceId)).toEqual({ status: 'failure', msg: r.json.msg, user_id: id });
        }
      },
      D1_START_MS,
    );
  });
}
