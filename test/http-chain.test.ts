import { describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, makeTestApp } from './support/app.ts';

const logLines: string[] = [];
const t = await makeTestApp({ env: { CORS_ORIGINS: 'http://spa.example, http://other.example' }, logLines });

describe('envelope and trace id', () => {
  test('success: status 200, msg SUCCESS, traceId in body and header', async () => {
    const r = await t.call('GET', '/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 200, msg: 'SUCCESS', data: { ok: true }, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(r.res.headers.get('x-trace-id')).toBe(r.json.traceId);
  });

  test('a valid W3C traceparent supplies the trace id', async () => {
    const r = await t.call('GET', '/health', { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    expect(r.json.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(r.res.headers.get('x-trace-id')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  test.each([
    'garbage',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01',
  ])('an invalid traceparent (%s) gets a fresh id', async (tp) => {
    const r = await t.call('GET', '/health', { headers: { traceparent: tp } });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(r.json.traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  test('unknown route: 404 envelope', async () => {
    const r = await t.call('GET', '/app/nothing/here');
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ status: 404, data: null });
    expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  test('wrong method on a known path: 404 envelope', async () => {
    const r = await t.call('DELETE', '/auth/login');
    expect(r.status).toBe(404);
    expect(r.json.status).toBe(404);
  });
});

describe('bad input is a 400 envelope that names the problem', () => {
  test('malformed JSON', async () => {
    const r = await t.call('POST', '/auth/login', { body: '{"loginName": "admin",' });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, data: null, msg: 'Malformed JSON in request body' });
  });

  test('unknown field', async () => {
    const r = await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'x', isAdmin: true } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain('isAdmin');
  });

  test('wrong type names the field', async () => {
    const r = await t.call('POST', '/auth/login', { body: { loginName: 42, password: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toStartWith('loginName:');
  });

  test('JSON array instead of object', async () => {
    const r = await t.call('POST', '/auth/login', { body: '[1,2]' });
    expect(r.status).toBe(400);
  });

  test('missing body', async () => {
    const r = await t.call('POST', '/auth/login', { headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
  });

  test('non-JSON content type: 415', async () => {
    const r = await t.call('POST', '/auth/login', { body: 'loginName=admin', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(415);
    expect(r.json.status).toBe(415);
  });
});

describe('body limit', () => {
  test('a JSON body over 1 MiB is refused with 413 and writes nothing', async () => {
    const before = t.count('login_log');
    const big = JSON.stringify({ loginName: 'admin', password: 'x'.repeat(1024 * 1024) });
    const r = await t.call('POST', '/auth/login', { body: big });
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ status: 413, data: null });
    expect(t.count('login_log')).toBe(before);
  });

  test('the limit also holds without Content-Length (streamed body)', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent > 2 * 1024 * 1024) return ctrl.close();
        sent += chunk.length;
        ctrl.enqueue(chunk);
      },
    });
    const res = await t.app.request('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      // @ts-expect-error Bun needs duplex for streamed request bodies
      duplex: 'half',
    });
    expect(res.status).toBe(413);
  });
});

describe('unexpected errors', () => {
  test('500 envelope with traceId; the stack is logged, never shown', async () => {
    t.sqlite.run('ALTER TABLE login_log RENAME TO login_log_gone');
    try {
      const r = await t.call('POST', '/auth/login', { body: { loginName: 'nobody', password: 'whatever-123' } });
      expect(r.status).toBe(500);
      expect(r.json).toEqual({ status: 500, msg: 'Internal server error', data: null, traceId: expect.any(String) });
      const text = JSON.stringify(r.json);
      expect(text).not.toContain('login_log');
      expect(text).not.toContain('.ts');
      const logged = logLines.map((l) => JSON.parse(l)).find((l) => l.level === 'error' && l.traceId === r.json.traceId);
      expect(logged).toBeDefined();
      expect(logged.stack).toContain('login_log');
    } finally {
      t.sqlite.run('ALTER TABLE login_log_gone RENAME TO login_log');
    }
  });
});

describe('CORS and security headers', () => {
  test('preflight from an allowed origin allows Authorization and Content-Type', async () => {
    const res = await t.app.request('/app/sysLoginUser/getLoginUserInformation', {
      method: 'OPTIONS',
      headers: { origin: 'http://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://spa.example');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  test('an SPA on another origin may send a dictionary ETag back (If-None-Match) and read the new one', async () => {
    const res = await t.app.request('/app/sysDict/all', {
      method: 'OPTIONS',
      headers: { origin: 'http://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,if-none-match' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase().split(',')).toContain('if-none-match');
    const simple = await t.app.request('/health', { headers: { origin: 'http://spa.example' } });
    expect(simple.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  test('simple request from an allowed origin exposes X-Trace-Id', async () => {
    const res = await t.app.request('/health', { headers: { origin: 'http://other.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('http://other.example');
    expect(res.headers.get('access-control-expose-headers')).toContain('X-Trace-Id');
  });

  test('an origin not listed gets no CORS grant', async () => {
    const res = await t.app.request('/health', { headers: { origin: 'http://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await t.app.request('/health', {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'GET' },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('error responses carry CORS and trace headers too', async () => {
    const res = await t.app.request('/app/sysLoginUser/getLoginUserInformation', { headers: { origin: 'http://spa.example' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('access-control-allow-origin')).toBe('http://spa.example');
    expect(res.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  test('secure headers are set', async () => {
    const res = await t.app.request('/health');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('strict-transport-security')).toContain('max-age');
  });
});

describe('docs', () => {
  test('/docs serves an interactive reference page with its assets from the service, nothing from a CDN', async () => {
    const res = await t.app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('/openapi.json');
    // Every script and stylesheet the page loads is a path on this service.
    const refs = [...html.matchAll(/<(?:script\b[^>]*\bsrc|link rel="stylesheet"[^>]*\bhref)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.sort()).toEqual(['/docs/docs.css', '/docs/docs.js']);
    expect(html).not.toMatch(/https?:\/\/|\/\/cdn|jsdelivr|unpkg/);
    // The browser may load only what this origin serves.
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toMatch(/https?:|\*|unsafe/);
    for (const [path, type] of [['/docs/docs.js', 'text/javascript'], ['/docs/docs.css', 'text/css']] as const) {
      const a = await t.app.request(path);
      expect([path, a.status, a.headers.get('content-type')]).toEqual([path, 200, `${type}; charset=utf-8`]);
      expect(await a.text()).not.toMatch(/https?:\/\//);
    }
  });

  test('docs can be switched off by configuration', async () => {
    const off = await makeTestApp({ env: { DOCS_ENABLED: 'false' } });
    expect((await off.app.request('/openapi.json')).status).toBe(404);
    expect((await off.app.request('/docs')).status).toBe(404);
  });
});

describe('headers on every answer', () => {
  test('a 413 from the body limit carries the trace id, security and CORS headers', async () => {
    const res = await t.app.request('/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://spa.example' },
      body: JSON.stringify({ loginName: 'admin', password: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { traceId: string };
    expect(res.headers.get('x-trace-id')).toBe(body.traceId);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('access-control-allow-origin')).toBe('http://spa.example');
  });

  test('401, 404 and 400 answers carry them too', async () => {
    for (const [method, path, body] of [['GET', '/app/sysUser/detail?id=1', undefined], ['GET', '/nope', undefined], ['POST', '/auth/login', '{']] as const) {
      const res = await t.app.request(path, { method, headers: { 'content-type': 'application/json' }, body });
      expect(res.headers.get('x-trace-id')).toMatch(/^[0-9a-f]{32}$/);
      expect(res.headers.get('strict-transport-security')).toContain('max-age');
    }
  });
});

describe('TRUST_PROXY', () => {
  test('the client address is the last X-Forwarded-For hop, so a client cannot pick one per request', async () => {
    const p = await makeTestApp({ env: { TRUST_PROXY: 'true' } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await p.call('POST', '/auth/login', {
        body: { loginName: 'admin', password: `wrong-guess-${i}` },
        headers: { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` },
      });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const ips = p.sqlite.query('SELECT DISTINCT ip FROM login_log').all();
    expect(ips).toEqual([{ ip: '203.0.113.7' }]);
  });

  test('without TRUST_PROXY the header is ignored', async () => {
    const r = await t.call('POST', '/auth/login', { body: { loginName: 'nobody', password: 'whatever-1' }, headers: { 'x-forwarded-for': '192.0.2.1' } });
    expect(r.status).toBe(401);
    expect(t.sqlite.query('SELECT ip FROM login_log WHERE trace_id = ?').get(r.json.traceId)).toEqual({ ip: '127.0.0.1' });
  });
});

describe('Cache-Control: no-store on the login flow and the own profile', () => {
  test('every /auth/* and /app/sysLoginUser/* answer, errors included; other routes are not forced', async () => {
    const token = await t.login();
    const answers = [
      await t.call('GET', '/auth/captcha'),
      await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'wrong-password-here' }, headers: { 'x-test-ip': '10.77.0.1' } }),
      await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'x', extra: 1 } }),
      await t.call('GET', '/auth/nothing'),
      await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token }),
      await t.call('GET', '/app/sysLoginUser/getLoginUserInformation'),
      await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body: { nickName: 'Admin' } }),
      await t.call('POST', '/auth/logout', { token }),
    ];
    expect(answers.map((r) => [r.status, r.res.headers.get('cache-control')])).toEqual([
      [200, 'no-store'],
      [401, 'no-store'],
      [400, 'no-store'],
      [404, 'no-store'],
      [200, 'no-store'],
      [401, 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
    ]);
    expect((await t.call('GET', '/health')).res.headers.get('cache-control')).toBeNull();
    // The login token itself must come with it.
    const login = await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: ADMIN_PASSWORD } });
    expect([login.status, login.res.headers.get('cache-control')]).toEqual([200, 'no-store']);
  });
});
