import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { stopEverything, type Target, type Targets } from './servers.ts';

/**
 * The black-box contract suite: plain HTTP against a base URL, the way an SPA uses the API. The
 * same tests run against the Bun server and against `wrangler dev` (workerd, local D1 and R2).
 * Database reads are used only where the API has no read for a side effect yet.
 */

interface Reply {
  status: number;
  headers: Headers;
  json: { status: number; msg: string; data: any; traceId: string };
  data: any;
  ms: number;
}

async function call(
  t: Target,
  method: string,
  path: string,
  init: { token?: string; body?: unknown; headers?: Record<string, string>; chunked?: boolean } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | FormData | ReadableStream<Uint8Array> | undefined;
  if (init.body instanceof FormData) body = init.body;
  else if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  // A stream body has no known length: fetch sends it chunked, with no Content-Length.
  if (init.chunked && typeof body === 'string') body = chunkedBody(body);
  const started = performance.now();
  const res = await fetch(t.baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(15_000), duplex: 'half' } as RequestInit);
  const json = (await res.json()) as Reply['json'];
  return { status: res.status, headers: res.headers, json, data: json.data, ms: performance.now() - started };
}

/** A body in two chunks from a stream, so the request goes out with Transfer-Encoding: chunked. */
function chunkedBody(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const half = bytes.length >> 1;
  return new ReadableStream({
    start(ctl) {
      ctl.enqueue(bytes.slice(0, half));
      ctl.enqueue(bytes.slice(half));
      ctl.close();
    },
  });
}

function expectEnvelope(r: Reply, status: number) {
  expect({ status: r.status, msg: r.status === status ? 'ok' : r.json.msg }).toEqual({ status, msg: 'ok' });
  expect(r.json.status).toBe(status);
  expect(r.json.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(r.headers.get('x-trace-id')).toBe(r.json.traceId);
  if (status === 200) expect(r.json.msg).toBe('SUCCESS');
  else expect(r.json.data).toBeNull();
}

/** Every route the suite calls: a missing one fails the suite instead of skipping checks. */
const REQUIRED_ROUTES = [
  '/auth/captcha', '/auth/login', '/auth/logout',
  '/app/sysLoginUser/getLoginUserInformation', '/app/sysLoginUser/updateInfo',
  '/app/sysUser/add', '/app/sysUser/page', '/app/sysUser/edit', '/app/sysUser/delete', '/app/sysUser/detail', '/app/sysUser/grantRole',
  '/app/sysRole/add', '/app/sysRole/grantMenu', '/app/sysRole/page', '/app/sysMenu/tree',
  '/app/sysLoginLog/page', '/app/sysOpLog/page', '/app/sysOnlineUser/page',
  '/app/sysApiKey/add', '/app/sysApiKey/revoke',
  '/app/sysFile/upload', '/app/sysFile/delete', '/app/sysFile/download', '/app/sysImage/upload', '/app/sysImage/preview',
];

export function contractSuite(name: string, start: () => Promise<Targets>, startTimeoutMs = 90_000) {
  // Known when the suite is declared, so a case that cannot run is reported as skipped, with why.
  const hasCaptchaServer = name !== 'external' || Boolean(process.env.E2E_CAPTCHA_BASE_URL);
  const hasDatabase = name !== 'external';
  // A test that runs out of time gets its servers killed by bun test (every later test then fails
  // with ECONNRESET), and workerd's argon2id logins take ~0.6 s each, seconds on a loaded machine.
  setDefaultTimeout(60_000);
  describe(`contract over HTTP (${name})`, () => {
    let t: Targets;
    let paths = new Set<string>();
    const login = async (loginName = 'admin', password = t.adminPassword) => {
      const r = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName, password } });
      expectEnvelope(r, 200);
      return r;
    };

    beforeAll(async () => {
      t = await start();
      // No document, or one without routes, is a failure of the suite, never a reason to skip.
      const res = await fetch(`${t.captchaOff.baseUrl}/openapi.json`);
      if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}: the contract suite needs the published document`);
      const doc = (await res.json()) as { paths?: object };
      paths = new Set(Object.keys(doc.paths ?? {}));
      if (paths.size === 0) throw new Error('/openapi.json lists no route');
    }, startTimeoutMs);

    test('/openapi.json lists every route this suite exercises', () => {
      expect(REQUIRED_ROUTES.filter((p) => !paths.has(p))).toEqual([]);
    });

    afterAll(async () => {
      await t?.stop();
      await stopEverything();
    }, 30_000);

    test('health, trace ids and the 404 envelope', async () => {
      const h = await call(t.captchaOff, 'GET', '/health', {
        headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
      });
      expectEnvelope(h, 200);
      expect(h.data).toEqual({ ok: true });
      expect(h.json.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      const missing = await call(t.captchaOff, 'GET', '/app/nope/nothing');
      expectEnvelope(missing, 404);
    });

    test.skipIf(!hasCaptchaServer)('captcha enabled: an SVG challenge; a missing or wrong code is refused with 400 (needs E2E_CAPTCHA_BASE_URL on external)', async () => {
      const c = await call(t.captchaOn, 'GET', '/auth/captcha');
      expectEnvelope(c, 200);
      expect(c.data.enabled).toBe(true);
      expect(c.data.codeKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(c.data.expiresIn).toBeGreaterThan(0);
      expect(c.data.image).toStartWith('data:image/svg+xml;base64,');
      const svg = atob(c.data.image.slice('data:image/svg+xml;base64,'.length));
      expect(svg).toContain('<path');
      expect(svg).not.toContain('<text');

      const creds = { loginName: 'admin', password: t.adminPassword };
      const missing = await call(t.captchaOn, 'POST', '/auth/login', { body: creds });
      expectEnvelope(missing, 400);
      expect(missing.json.msg).toContain('securityCode');
      // The right password does not get past a wrong code, and the code is used up by the attempt.
      const wrong = await call(t.captchaOn, 'POST', '/auth/login', { body: { ...creds, codeKey: c.data.codeKey, securityCode: '0000' } });
      expectEnvelope(wrong, 400);
      expect(wrong.json.msg).toContain('securityCode');
      const reused = await call(t.captchaOn, 'POST', '/auth/login', { body: { ...creds, codeKey: c.data.codeKey, securityCode: '0000' } });
      expectEnvelope(reused, 400);
      // One path, no per-glyph element: the markup does not hand the answer to a script.
      expect(svg.match(/<path\b/g)).toHaveLength(1);
    });

    test.skipIf(!hasDatabase)('a wrong code uses the captcha up: its row is gone, so the right answer cannot follow (database check; not on external)', async () => {
      const c = await call(t.captchaOn, 'GET', '/auth/captcha');
      expectEnvelope(c, 200);
      const rows = () => t.captchaOn.sql<{ n: number }>('SELECT count(*) AS n FROM captchas WHERE key = ?', c.data.codeKey)[0]!.n;
      expect(rows()).toBe(1);
      const wrong = await call(t.captchaOn, 'POST', '/auth/login', { body: { loginName: 'admin', password: t.adminPassword, codeKey: c.data.codeKey, securityCode: 'ZZZZZ' } });
      expectEnvelope(wrong, 400);
      expect(rows()).toBe(0);
    });

    test('captcha disabled: the challenge says so and login needs no code', async () => {
      const c = await call(t.captchaOff, 'GET', '/auth/captcha');
      expectEnvelope(c, 200);
      expect(c.data).toMatchObject({ enabled: false, codeKey: null, image: null });
    });

    test('wrong name and wrong password get the same 401', async () => {
      const wrongPw = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName: 'admin', password: 'not-the-password' } });
      const noUser = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName: 'ghost', password: 'not-the-password' } });
      expectEnvelope(wrongPw, 401);
      expectEnvelope(noUser, 401);
      expect(noUser.json.msg).toBe(wrongPw.json.msg);
      const bad = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName: 'admin', password: 'x', extra: 1 } });
      expectEnvelope(bad, 400);
      // zod's own English message: the Worker bundle swaps zod's locale index for an empty module.
      const typed = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName: 123, password: 'x' } });
      expectEnvelope(typed, 400);
      expect(typed.json.msg).toMatch(/^loginName: .*expected string/);
    });

    test('login, then the logged-in user information an SPA builds its menus from', async () => {
      const r = await login();
      expect(r.data.tokenType).toBe('Bearer');
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.data.expiresIn).toBeGreaterThan(0);
      if (name === 'workerd') console.log(`[e2e workerd] login wall time incl. argon2id verify: ${r.ms.toFixed(0)} ms`);
      const anonymous = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation');
      expectEnvelope(anonymous, 401);
      const garbage = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: 'abc.def.ghijklmnop' });
      expectEnvelope(garbage, 401);
      const info = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: r.data.token });
      expectEnvelope(info, 200);
      expect(info.data.user.loginName).toBe('admin');
      expect(info.data.user).not.toHaveProperty('passwordHash');
      expect(info.data.roles).toContain('superAdmin');
      expect(info.data.permissions).toEqual(['*']);
      expect(Array.isArray(info.data.menus)).toBe(true);

      // The login log's client facts (through the API, so on every target): the socket address on
      // Bun, CF-Connecting-IP and request.cf on Workers.
      const logs = await call(t.captchaOff, 'POST', '/app/sysLoginLog/page', { token: r.data.token, body: { pageSize: 100, params: { loginName: 'admin' } } });
      expectEnvelope(logs, 200);
      const row = (logs.data.records as { traceId: string; ip: string; country: string | null; status: string }[]).find((x) => x.traceId === r.json.traceId);
      expect(row?.status).toBe('success');
      if (t.runtime === 'external') expect(row?.ip).toMatch(/\S/);
      else expect(row?.ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
      if (t.runtime === 'workerd') expect(row?.country).toMatch(/^[A-Z]{2}$/);
      else if (t.runtime !== 'external') expect(row?.country).toBeNull();
    });

    test('a write is applied and recorded in the operation log, a refused one too and changes nothing', async () => {
      const { data } = await login();
      const token = data.token as string;
      const nick = `Root ${name}`;
      const upd = await call(t.captchaOff, 'POST', '/app/sysLoginUser/updateInfo', { token, body: { nickName: nick, phone: '+1 555 0100' } });
      expectEnvelope(upd, 200);
      expect(upd.data).toMatchObject({ nickName: nick, phone: '+1 555 0100' });
      const refused = await call(t.captchaOff, 'POST', '/app/sysLoginUser/updateInfo', { token, body: { nickName: 'Hacker', id: 2 } });
      expectEnvelope(refused, 400);
      const info = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token });
      expect(info.data.user.nickName).toBe(nick);

      const rows = await opLogRows([upd.json.traceId, refused.json.traceId]);
      expect(rows.length).toBe(2);
      const ok = rows.find((r) => r.traceId === upd.json.traceId)!;
      expect(ok).toMatchObject({ module: 'sysLoginUser', action: 'updateInfo', status: 200, operatorName: 'admin' });
      expect(rows.find((r) => r.traceId === refused.json.traceId)).toMatchObject({ action: 'updateInfo', status: 400 });
    });

    /** The op-log rows with these trace ids, through sysOpLog/page. */
    async function opLogRows(traceIds: string[]): Promise<Record<string, unknown>[]> {
      const { data } = await login();
      const page = await call(t.captchaOff, 'POST', '/app/sysOpLog/page', {
        token: data.token,
        body: { pageNo: 1, pageSize: 100, params: { module: 'sysLoginUser' } },
      });
      expectEnvelope(page, 200);
      return (page.data.records as Record<string, unknown>[]).filter((r) => traceIds.includes(r.traceId as string));
    }

    test('chunked bodies (no Content-Length) keep the client address: lockout, login log, op log, online sessions', async () => {
      const admin = (await login()).data.token as string;
      const loginName = `chunk${name}${Date.now() % 100000}`;
      const password = 'Chunked-User-Pass-77';
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/add', { token: admin, body: { loginName, nickName: 'Chunked', password } }), 200);
      // A local server sees the loopback address; a remote one at least some address.
      const peer = t.runtime === 'external' ? /\S/ : /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/;

      const ok = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName, password }, chunked: true });
      expectEnvelope(ok, 200);
      const token = ok.data.token as string;
      const upd = await call(t.captchaOff, 'POST', '/app/sysLoginUser/updateInfo', { token, body: { nickName: 'Chunked too' }, chunked: true });
      expectEnvelope(upd, 200);
      expect(upd.data.nickName).toBe('Chunked too');

      const online = await call(t.captchaOff, 'POST', '/app/sysOnlineUser/page', { token: admin, body: { params: { loginName } } });
      expectEnvelope(online, 200);
      expect(online.data.records.map((r: { ip: string }) => r.ip)).toEqual([expect.stringMatching(peer)]);
      const ops = await call(t.captchaOff, 'POST', '/app/sysOpLog/page', {
        token: admin,
        body: { pageSize: 100, params: { module: 'sysLoginUser', action: 'updateInfo' } },
      });
      expectEnvelope(ops, 200);
      expect(ops.data.records.find((r: { traceId: string }) => r.traceId === upd.json.traceId)?.ip).toMatch(peer);

      // Five failures, alternating encodings, then the right password chunked: the name is locked.
      const tries: Reply[] = [];
      for (let i = 0; i < 5; i++) {
        tries.push(await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName, password: `Wrong-${i}-Pass` }, chunked: i % 2 === 0 }));
      }
      for (const r of tries) expectEnvelope(r, 401);
      const locked = await call(t.captchaOff, 'POST', '/auth/login', { body: { loginName, password }, chunked: true });
      expectEnvelope(locked, 429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);

      const logs = await call(t.captchaOff, 'POST', '/app/sysLoginLog/page', { token: admin, body: { pageSize: 100, params: { loginName } } });
      expectEnvelope(logs, 200);
      const byTrace = new Map((logs.data.records as { traceId: string; ip: string; status: string }[]).map((r) => [r.traceId, r]));
      for (const r of [ok, ...tries, locked]) expect(byTrace.get(r.json.traceId)?.ip).toMatch(peer);
      expect(byTrace.get(ok.json.traceId)?.status).toBe('success');
      expect(byTrace.get(locked.json.traceId)?.status).toBe('failure');
    });

    test('RBAC: no code → 403 and nothing written; a granted role applies on the next request; stale edits → 409; delete ends sessions', async () => {
      const admin = (await login()).data.token as string;
      const loginName = `plain${name}${Date.now() % 100000}`;
      const password = 'Plain-User-Pass-77';
      const add = await call(t.captchaOff, 'POST', '/app/sysUser/add', { token: admin, body: { loginName, nickName: 'Plain', password } });
      expectEnvelope(add, 200);
      const userId = add.data.id as number;
      // Constraint errors are mapped from the database's own text, which differs in wrapping on D1.
      const dup = await call(t.captchaOff, 'POST', '/app/sysUser/add', { token: admin, body: { loginName: loginName.toUpperCase(), password } });
      expectEnvelope(dup, 409);
      {
        const unknownRole = await call(t.captchaOff, 'POST', '/app/sysUser/grantRole', { token: admin, body: { userId, roleIds: [987654] } });
        expectEnvelope(unknownRole, 400);
        expect(unknownRole.json.msg).toContain('987654');
      }
      const total = async () =>
        (await call(t.captchaOff, 'POST', '/app/sysUser/page', { token: admin, body: { pageNo: 1, pageSize: 1 } })).data.total as number;
      const before = await total();

      const plain = (await login(loginName, password)).data.token as string;
      const own = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: plain });
      expectEnvelope(own, 200);
      expect(own.data.permissions).toEqual([]);
      const denied = await call(t.captchaOff, 'POST', '/app/sysUser/add', { token: plain, body: { loginName: `${loginName}x`, password } });
      expectEnvelope(denied, 403);
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/page', { token: plain, body: {} }), 403);
      expect(await total()).toBe(before);

      // Grant a role holding sys:user:page: the very next request passes.
      {
        const tree = await call(t.captchaOff, 'GET', '/app/sysMenu/tree', { token: admin });
        expectEnvelope(tree, 200);
        const flat = (nodes: any[]): any[] => nodes.flatMap((n) => [n, ...flat(n.children ?? [])]);
        const menu = flat(tree.data).find((m) => m.permission === 'sys:user:page');
        expect(menu).toBeDefined();
        const grantButton = flat(tree.data).find((m) => m.permission === 'sys:user:grantRole');
        expect(grantButton).toBeDefined();
        const role = await call(t.captchaOff, 'POST', '/app/sysRole/add', { token: admin, body: { name: 'Pager', code: `pager${Date.now() % 100000}` } });
        expectEnvelope(role, 200);
        const menuIds = [menu.id, grantButton.id];
        expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role.data.id, menuIds } }), 200);
        expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/grantRole', { token: admin, body: { userId, roleIds: [role.data.id] } }), 200);
        expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/page', { token: plain, body: {} }), 200);
        expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/add', { token: plain, body: { loginName: `${loginName}y`, password } }), 403);
        // sys:user:grantRole is no way to super admin (403); an ordinary grant by a non-super-admin
        // runs its batch with the super-admin guard statement first (a D1 batch on Workers).
        const escalate = await call(t.captchaOff, 'POST', '/app/sysUser/grantRole', { token: plain, body: { userId, roleIds: [role.data.id, 1] } });
        expectEnvelope(escalate, 403);
        expect(escalate.json.msg).toContain('Only a super administrator');
        expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/grantRole', { token: plain, body: { userId, roleIds: [role.data.id] } }), 200);
        expect((await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: plain })).data.permissions).not.toContain('*');
      }

      // Optimistic locking: the version guard runs inside the atomic batch (a D1 batch on Workers).
      const detail = await call(t.captchaOff, 'GET', `/app/sysUser/detail?id=${userId}`, { token: admin });
      expectEnvelope(detail, 200);
      const version = detail.data.version as number;
      const stale = await call(t.captchaOff, 'POST', '/app/sysUser/edit', { token: admin, body: { id: userId, version: version + 5, nickName: 'Stale' } });
      expectEnvelope(stale, 409);
      const fresh = await call(t.captchaOff, 'POST', '/app/sysUser/edit', { token: admin, body: { id: userId, version, nickName: 'Fresh' } });
      expectEnvelope(fresh, 200);
      const after = await call(t.captchaOff, 'GET', `/app/sysUser/detail?id=${userId}`, { token: admin });
      expect(after.data).toMatchObject({ nickName: 'Fresh', version: version + 1 });

      // Deleting one's own account (here also the last super admin) is refused and changes nothing.
      const self = await call(t.captchaOff, 'POST', '/app/sysUser/delete', { token: admin, body: { ids: [1] } });
      expectEnvelope(self, 400);
      const del = await call(t.captchaOff, 'POST', '/app/sysUser/delete', { token: admin, body: { ids: [userId] } });
      expectEnvelope(del, 200);
      expectEnvelope(await call(t.captchaOff, 'GET', `/app/sysUser/detail?id=${userId}`, { token: admin }), 404);
      expectEnvelope(await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: plain }), 401);
      expect(await total()).toBe(before - 1);
    });

    test('logout revokes exactly that token on the next request', async () => {
      const first = (await login()).data.token as string;
      const second = (await login()).data.token as string;
      const out = await call(t.captchaOff, 'POST', '/auth/logout', { token: first });
      expectEnvelope(out, 200);
      const after = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: first });
      expectEnvelope(after, 401);
      const again = await call(t.captchaOff, 'POST', '/auth/logout', { token: first });
      expectEnvelope(again, 401);
      const other = await call(t.captchaOff, 'GET', '/app/sysLoginUser/getLoginUserInformation', { token: second });
      expectEnvelope(other, 200);
    });

    test('an API key: a read it carries passes, one it does not is 403, revoked it is 401', async () => {
      const token = (await login()).data.token as string;
      const add = await call(t.captchaOff, 'POST', '/app/sysApiKey/add', { token, body: { name: `e2e ${name}`, codes: ['sys:user:detail'] } });
      expectEnvelope(add, 200);
      const key = add.data.secret as string;
      expect(key).toMatch(new RegExp(`^ea_${add.data.id}_[A-Za-z0-9_-]{43}$`));
      const allowed = await call(t.captchaOff, 'GET', '/app/sysUser/detail?id=1', { token: key });
      expectEnvelope(allowed, 200);
      expect(allowed.data.loginName).toBe('admin');
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysUser/page', { token: key, body: {} }), 403);
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysApiKey/revoke', { token, body: { ids: [add.data.id] } }), 200);
      expectEnvelope(await call(t.captchaOff, 'GET', '/app/sysUser/detail?id=1', { token: key }), 401);
    });

    test('page filters take the longest search text they accept (D1 refuses LIKE patterns over 50 bytes)', async () => {
      const pages: [string, string][] = [
        ['/app/sysUser/page', 'loginName'],
        // The part-of searches: one statement of their own on every runtime (node:sqlite counts its `?`).
        ['/app/sysUser/page', 'nickName'],
        ['/app/sysFile/page', 'name'],
        ['/app/sysFile/page', 'contentType'],
        ['/app/sysRole/page', 'name'],
        ['/app/sysLoginLog/page', 'loginName'],
        ['/app/sysOpLog/page', 'operatorName'],
      ];
      const mounted = pages;
      const token = (await login()).data.token as string;
      // 48 bytes: with the two % of a contains-pattern exactly D1's 50; ü is two bytes in UTF-8.
      for (const [path, field] of mounted) {
        for (const text of ['q'.repeat(48), 'ü'.repeat(24)]) {
          const r = await call(t.captchaOff, 'POST', path, { token, body: { pageNo: 1, pageSize: 10, params: { [field]: text } } });
          expectEnvelope(r, 200);
          expect(r.data.records).toEqual([]);
        }
        const tooLong = await call(t.captchaOff, 'POST', path, { token, body: { params: { [field]: 'q'.repeat(49) } } });
        expectEnvelope(tooLong, 400);
      }
    });

    test('files: upload, then download through the signed link without a token; ranges, dedup, delete', async () => {
      const token = (await login()).data.token as string;
      const content = `edge-admin e2e over ${name}\n`.repeat(400);
      const upload = (fileName: string) => {
        const form = new FormData();
        form.append('file', new File([content], fileName, { type: 'text/plain' }));
        return call(t.captchaOff, 'POST', '/app/sysFile/upload', { token, body: form });
      };
      const up = await upload('notes é.txt');
      expectEnvelope(up, 200);
      expect(up.data).toMatchObject({ name: 'notes é.txt', size: content.length });
      expect(up.data.sha256).toMatch(/^[0-9a-f]{64}$/);
      const link = `${t.captchaOff.baseUrl}${up.data.url}`;

      const dl = await fetch(link);
      expect(dl.status).toBe(200);
      expect(await dl.text()).toBe(content);
      expect(dl.headers.get('content-disposition')).toMatch(/^attachment;.*filename\*=UTF-8''notes%20%C3%A9\.txt/);
      expect(dl.headers.get('x-content-type-options')).toBe('nosniff');
      const etag = dl.headers.get('etag');
      expect(etag).toBeTruthy();
      expect((await fetch(link, { headers: { 'if-none-match': etag! } })).status).toBe(304);
      const part = await fetch(link, { headers: { range: 'bytes=5-14' } });
      expect(part.status).toBe(206);
      expect(await part.text()).toBe(content.slice(5, 15));

      // A browser sends a non-Latin name as raw UTF-8 in the quoted filename.
      const intl = '名前 отчёт 🎉.txt';
      const form = new FormData();
      form.append('file', new File([`intl ${name}`], intl, { type: 'text/plain' }));
      const up2 = await call(t.captchaOff, 'POST', '/app/sysFile/upload', { token, body: form });
      expectEnvelope(up2, 200);
      expect(up2.data.name).toBe(intl);
      const dl2 = await fetch(`${t.captchaOff.baseUrl}${up2.data.url}`);
      expect(await dl2.text()).toBe(`intl ${name}`);
      const star = /filename\*=UTF-8''([^;]+)/.exec(dl2.headers.get('content-disposition') ?? '')?.[1] ?? '';
      expect(decodeURIComponent(star)).toBe(intl);
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysFile/delete', { token, body: { ids: [up2.data.id] } }), 200);

      const tampered = link.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
      expect((await fetch(tampered)).status).toBe(401);
      expect((await fetch(`${t.captchaOff.baseUrl}/app/sysFile/download?id=${up.data.id}`)).status).toBe(401);

      // Identical content is stored once and stays until its last record goes.
      const again = await upload('copy.txt');
      expectEnvelope(again, 200);
      expect(again.data.sha256).toBe(up.data.sha256);
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysFile/delete', { token, body: { ids: [up.data.id] } }), 200);
      expect((await fetch(link)).status).toBe(404);
      const second = await fetch(`${t.captchaOff.baseUrl}${again.data.url}`);
      expect(await second.text()).toBe(content);
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysFile/delete', { token, body: { ids: [again.data.id] } }), 200);
      expect((await fetch(`${t.captchaOff.baseUrl}${again.data.url}`)).status).toBe(404);
    });

    test('images: a PNG upload reads its size; the preview link serves it inline; a spoofed type is 415', async () => {
      const token = (await login()).data.token as string;
      const png = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='), (ch) =>
        ch.charCodeAt(0),
      );
      const form = new FormData();
      form.append('file', new File([png], 'dot.png', { type: 'image/png' }));
      const up = await call(t.captchaOff, 'POST', '/app/sysImage/upload', { token, body: form });
      expectEnvelope(up, 200);
      expect(up.data).toMatchObject({ width: 1, height: 1, contentType: 'image/png', size: png.length });
      const preview = await fetch(`${t.captchaOff.baseUrl}${up.data.url}`);
      expect(preview.status).toBe(200);
      expect(preview.headers.get('content-type')).toStartWith('image/png');
      expect(new Uint8Array(await preview.arrayBuffer())).toEqual(png);

      const fake = new FormData();
      fake.append('file', new File(['<svg onload=alert(1)>'], 'x.png', { type: 'image/png' }));
      expectEnvelope(await call(t.captchaOff, 'POST', '/app/sysImage/upload', { token, body: fake }), 415);
    });

    test.skipIf(name !== 'workerd')('the cron handler ticks the jobs table (workerd only: /cdn-cgi/handler/scheduled)', async () => {
      const res = await fetch(`${t.captchaOff.baseUrl}/cdn-cgi/handler/scheduled?cron=*+*+*+*+*`);
      expect(res.status).toBe(200);
      for (let i = 0; i < 50 && !t.captchaOff.output().includes('"msg":"jobs"'); i++) await Bun.sleep(100);
      expect(t.captchaOff.output()).toContain('"msg":"jobs"');
      expect(t.captchaOff.output()).not.toContain('scheduler tick failed');
    });
  });
}
