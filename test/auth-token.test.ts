import { describe, expect, test } from 'bun:test';
import { SignJWT } from 'jose';
import { makeTestApp } from './support/app.ts';

const t = await makeTestApp();
const INFO = '/app/sysLoginUser/getLoginUserInformation';

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

async function forge(claims: Record<string, unknown>, opts: { iss?: string; alg?: string } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(opts.iss ?? t.deps.config.JWT_ISSUER)
    .sign(await t.deps.keys.jwt());
}

describe('token checks', async () => {
  const token = await t.login();
  const [h, p] = token.split('.');
  const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());

  test('a valid token passes', async () => {
    const r = await t.call('GET', INFO, { token });
    expect(r.status).toBe(200);
    expect(r.data.user.loginName).toBe('admin');
  });

  test('the token carries sub, jti, iat, exp, iss and HS256', () => {
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString()).alg).toBe('HS256');
    // A copy: bun's toMatchObject with asymmetric matchers writes the matchers into the received object.
    expect({ ...payload }).toMatchObject({ sub: '1', jti: expect.any(String), iat: expect.any(Number), exp: expect.any(Number), iss: 'edge-admin' });
    expect(payload.exp - payload.iat).toBe(2592000);
  });

  const cases: [string, () => Promise<Record<string, string>>][] = [
    ['no Authorization header', async () => ({})],
    ['garbage token', async () => ({ authorization: 'Bearer not-a-jwt-at-all' })],
    ['wrong scheme', async () => ({ authorization: `Basic ${token}` })],
    ['tampered payload', async () => ({ authorization: `Bearer ${h}.${b64url({ ...payload, sub: '2' })}.${token.split('.')[2]}` })],
    ['tampered signature', async () => ({ authorization: `Bearer ${token.slice(0, -4)}AAAA` })],
    ['alg none', async () => ({ authorization: `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.` })],
    ['wrong issuer', async () => ({ authorization: `Bearer ${await forge({ sub: '1', jti: payload.jti, iat: payload.iat, exp: payload.exp }, { iss: 'someone-else' })}` })],
    ['missing jti', async () => ({ authorization: `Bearer ${await forge({ sub: '1', iat: payload.iat, exp: payload.exp })}` })],
    ['missing exp', async () => ({ authorization: `Bearer ${await forge({ sub: '1', jti: payload.jti, iat: payload.iat })}` })],
    ['unknown session id', async () => ({ authorization: `Bearer ${await forge({ sub: '1', jti: crypto.randomUUID(), iat: payload.iat, exp: payload.exp })}` })],
    ['session of another user', async () => ({ authorization: `Bearer ${await forge({ sub: '99', jti: payload.jti, iat: payload.iat, exp: payload.exp })}` })],
    ['token in a cookie only', async () => ({ cookie: `token=${token}; Authorization=Bearer ${token}` })],
  ];
  test.each(cases)('%s → 401', async (_name, headers) => {
    const r = await t.call('GET', INFO, { headers: await headers() });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ status: 401, data: null });
  });

  test('signed with another secret → 401', async () => {
    const other = await new SignJWT({ sub: '1', jti: payload.jti })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('edge-admin')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    expect((await t.call('GET', INFO, { token: other })).status).toBe(401);
  });

  test('an expired token → 401 (pinned clock past exp)', async () => {
    const at = t.clock.now();
    t.clock.advance(2592000 * 1000 + 1000);
    try {
      const r = await t.call('GET', INFO, { token });
      expect(r.status).toBe(401);
      expect(r.json.msg).toContain('expired');
    } finally {
      t.clock.set(at);
    }
  });

  // The two expiry checks each on their own, with a token never used before (so no verified-token
  // cache can answer): switching off either check must fail one of these.
  test('first seen after its JWT exp, with a session row still valid → 401 (the JWT check)', async () => {
    const fresh = await t.login();
    const jti = JSON.parse(Buffer.from(fresh.split('.')[1]!, 'base64url').toString()).jti as string;
    t.sqlite.query(`UPDATE sessions SET expires_at = '2999-01-01T00:00:00.000Z' WHERE id = ?`).run(jti);
    const at = t.clock.now();
    t.clock.advance(2592000 * 1000 + 1000);
    try {
      const r = await t.call('GET', INFO, { token: fresh });
      expect(r.status).toBe(401);
      expect(r.json.msg).toContain('expired');
    } finally {
      t.clock.set(at);
    }
  });

  test('first seen with its JWT valid but its session row expired → 401 (the session check)', async () => {
    const fresh = await t.login();
    const jti = JSON.parse(Buffer.from(fresh.split('.')[1]!, 'base64url').toString()).jti as string;
    t.sqlite.query(`UPDATE sessions SET expires_at = ? WHERE id = ?`).run(new Date(t.clock.now() - 1000).toISOString(), jti);
    expect((await t.call('GET', INFO, { token: fresh })).status).toBe(401);
    // The same token with the row made current again works: the row was the only reason.
    t.sqlite.query(`UPDATE sessions SET expires_at = '2999-01-01T00:00:00.000Z' WHERE id = ?`).run(jti);
    expect((await t.call('GET', INFO, { token: fresh })).status).toBe(200);
  });

  test('a disabled user is refused on the next request', async () => {
    const second = await t.login();
    t.sqlite.run(`UPDATE users SET status = 'disabled' WHERE id = 1`);
    try {
      expect((await t.call('GET', INFO, { token: second })).status).toBe(401);
    } finally {
      t.sqlite.run(`UPDATE users SET status = 'enabled' WHERE id = 1`);
    }
    expect((await t.call('GET', INFO, { token: second })).status).toBe(200);
  });

  test('logout revokes only that session, on the very next request', async () => {
    const a = await t.login();
    const b = await t.login();
    expect((await t.call('POST', '/auth/logout', { token: a })).status).toBe(200);
    expect((await t.call('GET', INFO, { token: a })).status).toBe(401);
    expect((await t.call('POST', '/auth/logout', { token: a })).status).toBe(401);
    expect((await t.call('GET', INFO, { token: b })).status).toBe(200);
  });

  test('each login gets its own session and token', async () => {
    const a = await t.login();
    const b = await t.login();
    expect(a).not.toBe(b);
    const sessions = t.sqlite.query(`SELECT count(*) AS n FROM sessions WHERE user_id = 1 AND revoked_at IS NULL`).get() as { n: number };
    expect(sessions.n).toBeGreaterThanOrEqual(2);
  });
});

describe('authentication cost', () => {
  test('one database statement authenticates and authorises a request', async () => {
    const token = await t.login();
    const seen: string[] = [];
    const original = t.sqlite.query.bind(t.sqlite);
    (t.sqlite as any).query = (sql: string) => {
      seen.push(sql);
      return original(sql);
    };
    try {
      // logout does no reads of its own beyond authentication: the auth statements (the session,
      // and who holds what: answered from the app's cache here, its statement reads no row), then the
      // write batch: the caller's check at its head (db/runner.ts: the session, and for a super admin
      // that they still are one) and the revoke.
      const r = await t.call('POST', '/auth/logout', { token });
      expect(r.status).toBe(200);
    } finally {
      (t.sqlite as any).query = original;
    }
    expect(seen.filter((s) => /^\s*select/i.test(s))).toHaveLength(2);
    expect(seen.map((s) => s.trim().slice(0, 70))).toEqual([
      expect.stringMatching(/^SELECT u\.login_name/),
      expect.stringMatching(/^SELECT EXISTS/),
      expect.stringMatching(/^INSERT INTO auth_guard_failures \(rule\) SELECT 'session_ended'/),
      expect.stringMatching(/^INSERT INTO auth_guard_failures \(rule\) SELECT 'not_permitted'/),
      expect.stringMatching(/^update "sessions"/),
    ]);
  });
});
