import { expect } from 'bun:test';
import { base32Decode } from '../../src/core/base32.ts';
import { totpAt } from '../../src/core/totp.ts';
import type { AnyTestApp } from './app.ts';

/** Adds user `name` (as `admin`) and has them enrol a TOTP factor of their own: from now on their password alone gives no token. */
export async function userWithTotp(t: AnyTestApp, admin: string, name: string, password: string) {
  expect((await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: name, password } })).status).toBe(200);
  const own = await t.login(name, password);
  const start = await t.call('POST', '/app/sysLoginUser/mfa/totp/start', { token: own });
  const secret = base32Decode(start.data.secret)!;
  const confirm = await t.call('POST', '/app/sysLoginUser/mfa/totp/confirm', { token: own, body: { code: await totpAt(secret, t.clock.now()) } });
  expect(confirm.status).toBe(200);
  return { token: own, secret };
}
