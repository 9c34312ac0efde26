import { describe, expect, test } from 'bun:test';
import { nodeArgon2Hasher } from '../src/adapters/server/argon2';
import type { PasswordHasher } from '../src/core/ports';
import { answerHash } from '../src/modules/auth/captcha.service';
import { ADMIN_PASSWORD, makeTestApp } from './support/app';

// Real argon2id parameters (m=19456 KiB, t=2, p=1), counted so the unknown-user path can be checked.
let verifies = 0;
const real = nodeArgon2Hasher();
const hasher: PasswordHasher = { hash: real.hash, verify: (h, p) => (verifies++, real.verify(h, p)) };
const t = await makeTestApp({ env: { CAPTCHA_ENABLED: 'true', CAPTCHA_PER_MINUTE: '30' }, hasher });
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Plants a captcha with a known answer, the way issueCaptcha stores one. */
async function plantCaptcha(answer = 'ACDE', ttlMs = 120_000) {
  const key = crypto.randomUUID();
  const now = t.clock.now();
  t.sqlite
    .query('INSERT INTO captchas (key, answer_hash, ip, expires_at, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(key, await answerHash(t.deps, key, answer), '127.0.0.1', new Date(now + ttlMs).toISOString(), new Date(now).toISOString());
  return key;
}

async function attempt(body: Record<string, unknown>, ip = '127.0.0.1') {
  return t.call('POST', '/auth/login', { body, headers: { 'x-test-ip': ip, 'user-agent': CHROME } });
}

async function loginWithCaptcha(loginName: string, password: string, ip = '127.0.0.1') {
  return attempt({ loginName, password, codeKey: await plantCaptcha('ACDE'), securityCode: 'acde' }, ip);
}

describe('GET /auth/captcha', () => {
  test('issues an SVG of glyph paths with a UUID key; the answer is stored hashed', async () => {
    const r = await t.call('GET', '/auth/captcha', { headers: { 'x-test-ip': '10.9.9.9' } });
    expect(r.status).toBe(200);
    const codeKey = r.data.codeKey as string;
    // A copy: bun's toMatchObject with asymmetric matchers writes them into the received object.
    expect({ ...r.data }).toMatchObject({ codeKey: expect.stringMatching(/^[0-9a-f-]{36}$/), expiresIn: 120, enabled: true });
    expect(r.data.image).toStartWith('data:image/svg+xml;base64,');
    const svg = Buffer.from(r.data.image.split(',')[1], 'base64').toString();
    expect(svg).toStartWith('<svg');
    expect(svg).toContain('<path');
    expect(svg).not.toContain('<text');
    expect(svg).not.toContain('font');
    const row = t.sqlite.query('SELECT answer_hash FROM captchas WHERE key = ?').get(codeKey) as { answer_hash: string };
    expect(row.answer_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('issuance is rate-limited per client with Retry-After', async () => {
    const ip = '10.7.7.7';
    for (let i = 0; i < 30; i++) expect((await t.call('GET', '/auth/captcha', { headers: { 'x-test-ip': ip } })).status).toBe(200);
    const r = await t.call('GET', '/auth/captcha', { headers: { 'x-test-ip': ip } });
    expect(r.status).toBe(429);
    expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await t.call('GET', '/auth/captcha', { headers: { 'x-test-ip': '10.7.7.8' } })).status).toBe(200);
    t.clock.advance(61_000);
    expect((await t.call('GET', '/auth/captcha', { headers: { 'x-test-ip': ip } })).status).toBe(200);
  });

  test('disabled by configuration: enabled=false and login ignores the fields', async () => {
    const off = await makeTestApp({ env: { CAPTCHA_ENABLED: 'false' } });
    const r = await off.call('GET', '/auth/captcha');
    expect(r.data).toEqual({ codeKey: null, image: null, expiresIn: 0, enabled: false });
    const login = await off.call('POST', '/auth/login', { body: { loginName: 'admin', password: ADMIN_PASSWORD } });
    expect(login.status).toBe(200);
  });
});

describe('POST /auth/login with the captcha', () => {
  test('right code and password: a Bearer token, a session and a success log row', async () => {
    const r = await loginWithCaptcha('admin', ADMIN_PASSWORD);
    expect(r.status).toBe(200);
    expect({ ...r.data }).toMatchObject({ token: expect.any(String), tokenType: 'Bearer', expiresIn: 2592000 });
    expect(Date.parse(r.data.expiresAt)).toBe(t.clock.now() + 2592000 * 1000);
    const log = t.sqlite.query(`SELECT * FROM login_log WHERE trace_id = ?`).get(r.json.traceId) as Record<string, unknown>;
    expect(log).toMatchObject({ login_name: 'admin', user_id: 1, status: 'success', ip: '127.0.0.1', browser: 'Chrome 131', os: 'Windows 10/11', user_agent: CHROME });
    const user = t.sqlite.query('SELECT last_login_ip FROM users WHERE id = 1').get() as { last_login_ip: string };
    expect(user.last_login_ip).toBe('127.0.0.1');
  });

  test('login names match case-insensitively', async () => {
    expect((await loginWithCaptcha('ADMIN', ADMIN_PASSWORD)).status).toBe(200);
  });

  test('missing code → 400', async () => {
    const r = await attempt({ loginName: 'admin', password: ADMIN_PASSWORD });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain('securityCode');
  });

  test('wrong code → 400, and the code is used up', async () => {
    const key = await plantCaptcha('ACDE');
    const r = await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'XXXX' });
    expect(r.status).toBe(400);
    expect(t.sqlite.query('SELECT 1 FROM captchas WHERE key = ?').get(key)).toBeNull();
    const again = await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'ACDE' });
    expect(again.status).toBe(400);
  });

  test('a code works once: reuse → 400', async () => {
    const key = await plantCaptcha('ACDE');
    expect((await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'ACDE' })).status).toBe(200);
    expect((await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'ACDE' })).status).toBe(400);
  });

  test('expired code → 400', async () => {
    const key = await plantCaptcha('ACDE');
    t.clock.advance(121_000);
    expect((await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'ACDE' })).status).toBe(400);
  });

  test('invented key → 400; a non-UUID key → 400', async () => {
    expect((await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: crypto.randomUUID(), securityCode: 'ACDE' })).status).toBe(400);
    const r = await attempt({ loginName: 'admin', password: ADMIN_PASSWORD, codeKey: "1' OR '1'='1", securityCode: 'ACDE' });
    expect(r.status).toBe(400);
    expect(r.json.msg).toStartWith('codeKey');
  });

  test('two parallel logins with one code: exactly one passes', async () => {
    const key = await plantCaptcha('ACDE');
    const body = { loginName: 'admin', password: ADMIN_PASSWORD, codeKey: key, securityCode: 'ACDE' };
    const results = await Promise.all([attempt(body), attempt(body), attempt(body)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400]);
  });
});

describe('credentials', () => {
  test('wrong password and unknown user: same 401 message; both verify a real hash', async () => {
    const before = verifies;
    const wrong = await loginWithCaptcha('admin', 'not-the-password', '10.1.0.1');
    const unknown = await loginWithCaptcha('nobody-here', 'not-the-password', '10.1.0.1');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.json.msg).toBe(wrong.json.msg);
    expect(verifies - before).toBe(2);
    const rows = t.sqlite.query(`SELECT login_name, status, user_id FROM login_log WHERE ip = '10.1.0.1' ORDER BY id`).all();
    expect(rows).toEqual([
      { login_name: 'admin', status: 'failure', user_id: null },
      { login_name: 'nobody-here', status: 'failure', user_id: null },
    ]);
  });

  test('a disabled user with the right password → 403, logged', async () => {
    const hash = await hasher.hash('Disabled-Pass-77');
    t.sqlite
      .query(`INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at) VALUES ('sleeper', ?, 'S', 'disabled', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`)
      .run(hash);
    const r = await loginWithCaptcha('sleeper', 'Disabled-Pass-77', '10.1.0.2');
    expect(r.status).toBe(403);
    expect(t.count('sessions')).toBeGreaterThan(0);
    expect(t.sqlite.query(`SELECT count(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.login_name = 'sleeper'`).get()).toEqual({ n: 0 });
  });
});

describe('throttling', () => {
  test('5 failures for a name from one address lock it for 10 minutes, even for the right password', async () => {
    const ip = '10.2.0.1';
    for (let i = 0; i < 5; i++) expect((await loginWithCaptcha('admin', `wrong-${i}-password`, ip)).status).toBe(401);
    const locked = await loginWithCaptcha('admin', ADMIN_PASSWORD, ip);
    expect(locked.status).toBe(429);
    expect(Number(locked.res.headers.get('retry-after'))).toBe(600);
    expect(locked.json).toMatchObject({ status: 429, data: null });
    // The same name from another address is not locked.
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, '10.2.0.2')).status).toBe(200);
    // A locked attempt is logged and creates no session.
    const sessionsBefore = t.count('sessions');
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(429);
    expect(t.count('sessions')).toBe(sessionsBefore);
    t.clock.advance(9 * 60_000);
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(429);
    t.clock.advance(60_000 + 1000);
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(200);
  });

  test('30 failures from one address within 10 minutes lock the address for every name', async () => {
    const ip = '10.3.0.1';
    for (let i = 0; i < 30; i++) expect((await loginWithCaptcha(`user${i}`, 'wrong-password-1', ip)).status).toBe(401);
    const r = await loginWithCaptcha('admin', ADMIN_PASSWORD, ip);
    expect(r.status).toBe(429);
    expect(Number(r.res.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(10 * 60_000 + 1000);
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(200);
  });

  test('a burst of parallel guesses is counted as it arrives: at most 5 reach the password check', async () => {
    const ip = '10.4.0.1';
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => loginWithCaptcha('admin', `burst-guess-${i}`, ip)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
    expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(429);
  });

  test('a right password in a burst after 4 failures cannot sneak past the lock', async () => {
    const ip = '10.4.0.2';
    for (let i = 0; i < 4; i++) expect((await loginWithCaptcha('admin', `before-${i}-guess`, ip)).status).toBe(401);
    const burst = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => loginWithCaptcha('admin', `burst-${i}-guess`, ip)),
      loginWithCaptcha('admin', ADMIN_PASSWORD, ip),
    ]);
    const wrong401 = burst.slice(0, 10).filter((r) => r.status === 401).length;
    const right = burst[10]!.status;
    // Only one more attempt fits under the limit of 5: either a guess used it, or the right password did.
    expect(wrong401 + (right === 200 ? 1 : 0)).toBeLessThanOrEqual(1);
  });

  test('a success gives its reserved count back to the address', async () => {
    const ip = '10.4.0.3';
    for (let i = 0; i < 35; i++) expect((await loginWithCaptcha('admin', ADMIN_PASSWORD, ip)).status).toBe(200);
  });
});


describe('refused login bodies are attempts too', () => {
  test('a body that fails validation writes a failure row with the name it carried', async () => {
    const r = await t.call('POST', '/auth/login', { body: { loginName: 'mallory', password: '' }, headers: { 'x-test-ip': '10.5.0.1' } });
    expect(r.status).toBe(400);
    const row = t.sqlite.query('SELECT login_name, status, msg, ip FROM login_log WHERE trace_id = ?').get(r.json.traceId);
    expect(row).toEqual({ login_name: 'mallory', status: 'failure', msg: r.json.msg, ip: '10.5.0.1' });
  });
  test('without a usable name the row has an empty one', async () => {
    const r = await t.call('POST', '/auth/login', { body: { loginName: 42, password: 'x' } });
    expect(r.status).toBe(400);
    expect(t.sqlite.query('SELECT login_name FROM login_log WHERE trace_id = ?').get(r.json.traceId)).toEqual({ login_name: '' });
  });
});
