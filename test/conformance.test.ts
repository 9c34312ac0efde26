// Conformance: a live Bun server (`bun src/entry/bun.ts`) is driven through every operation of its
// own /openapi.json — success and error answers — and every response is checked against the
// document (status declared, media type declared, body valid by ajv, described headers declared
// exactly where they are sent). Anything undeclared fails the test.
//
// Generic drivers cover every operation the document lists, including ones added later: no token
// (401), a caller without codes (403), a malformed body or id (400), a body over 1 MiB (413), the
// operation's own request example. A scenario table adds the successes and the specific errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bunServer, E2E_ADMIN_PASSWORD, type Target } from './e2e/servers.ts';
import { openApiChecker } from './support/openapi-check.ts';

const dir = mkdtempSync(join(tmpdir(), 'edge-conformance-'));
let server: Target;
/** The same server with the captcha on, for the captcha's own answers (429 after the limit). */
let captchaServer: Target;
let checker: ReturnType<typeof openApiChecker>;
let doc: any;
const problems: string[] = [];

type Init = { base?: string; token?: string | undefined; json?: unknown; body?: BodyInit; headers?: Record<string, string>; query?: string };
async function call(method: string, path: string, init: Init = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] = 'application/json';
  }
  const url = `${init.base ?? server.baseUrl}${path}${init.query ? `?${init.query}` : ''}`;
  const res = await fetch(url, { method, headers, body: body ?? null, signal: AbortSignal.timeout(20_000) });
  problems.push(...(await checker.check(method, url, res)));
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* a download */
  }
  return { status: res.status, json, data: json?.data, res, text };
}

async function login(loginName = 'admin', password = E2E_ADMIN_PASSWORD): Promise<string> {
  const r = await call('POST', '/auth/login', { json: { loginName, password } });
  if (r.status !== 200) throw new Error(`login ${loginName}: ${r.status} ${r.json?.msg}`);
  return r.data.token;
}

const PNG = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEklEQVR4nGP4z8DwHwyBNAMDAEIAA/0j8l5iAAAAAElFTkSuQmCC'),
  (c) => c.charCodeAt(0),
);
const form = (name: string, bytes: Uint8Array<ArrayBuffer> | string, type: string) => {
  const f = new FormData();
  f.append('file', new File([bytes], name, { type }));
  return f;
};

beforeAll(async () => {
  [server, captchaServer] = await Promise.all([
    bunServer(join(dir, 'srv'), false, { MAX_UPLOAD_BYTES: '65536', MAX_IMAGE_BYTES: '65536', BACKUP_DIR: join(dir, 'backups'), BACKUP_EVERY_HOURS: '0' }),
    bunServer(join(dir, 'captcha'), true, { CAPTCHA_PER_MINUTE: '3' }),
  ]);
  doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
  checker = openApiChecker(doc);
}, 60_000);

afterAll(async () => {
  await Promise.all([server?.stop(), captchaServer?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('every response conforms to /openapi.json', () => {
  let admin = '';
  let nobody = '';
  const ids: Record<string, number> = {};

  test('successes and specific errors, operation by operation', async () => {
    expect((await call('GET', '/health')).status).toBe(200);
    expect((await call('GET', '/health/ready')).status).toBe(200);
    // Captcha: the configured 3 per minute, then 429 with Retry-After.
    const base = captchaServer.baseUrl;
    for (let i = 0; i < 3; i++) expect((await call('GET', '/auth/captcha', { base })).status).toBe(200);
    expect((await call('GET', '/auth/captcha', { base })).status).toBe(429);
    expect((await call('GET', '/auth/captcha')).status).toBe(200); // captcha off: enabled false

    admin = await login();
    expect((await call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: admin })).status).toBe(200);
    expect((await call('POST', '/app/sysLoginUser/updateInfo', { token: admin, json: { nickName: 'Chief' } })).status).toBe(200);

    // Users and roles.
    const role = await call('POST', '/app/sysRole/add', { token: admin, json: { name: 'Auditor', code: 'auditor', sort: 1, remark: 'Reads logs' } });
    expect(role.status).toBe(200);
    ids.role = role.data.id;
    expect((await call('POST', '/app/sysRole/add', { token: admin, json: { name: 'Auditor 2', code: 'auditor' } })).status).toBe(409);
    expect((await call('POST', '/app/sysRole/page', { token: admin, json: { pageSize: 5 } })).status).toBe(200);
    expect((await call('GET', '/app/sysRole/list', { token: admin })).status).toBe(200);
    expect((await call('GET', '/app/sysRole/detail', { token: admin, query: `id=${ids.role}` })).status).toBe(200);
    expect((await call('GET', '/app/sysRole/detail', { token: admin, query: 'id=99999999' })).status).toBe(404);
    const roleEdit = await call('POST', '/app/sysRole/edit', { token: admin, json: { id: ids.role, version: role.data.version, remark: 'Reads all logs' } });
    expect(roleEdit.status).toBe(200);
    expect((await call('POST', '/app/sysRole/edit', { token: admin, json: { id: ids.role, version: role.data.version, remark: 'stale' } })).status).toBe(409);
    expect((await call('POST', '/app/sysRole/changeStatus', { token: admin, json: { id: ids.role, status: 'enabled' } })).status).toBe(200);
    const tree = await call('GET', '/app/sysMenu/tree', { token: admin });
    expect(tree.status).toBe(200);
    const someMenu = tree.data[0].id as number;
    expect((await call('POST', '/app/sysRole/grantMenu', { token: admin, json: { roleId: ids.role, menuIds: [someMenu] } })).status).toBe(200);
    expect((await call('GET', '/app/sysRole/ownMenu', { token: admin, query: `id=${ids.role}` })).status).toBe(200);

    const user = await call('POST', '/app/sysUser/add', {
      token: admin,
      json: { loginName: 'alice', password: 'Correct-Horse-42', nickName: 'Alice Liddell', email: 'alice@example.org', roleIds: [ids.role] },
    });
    expect(user.status).toBe(200);
    ids.user = user.data.id;
    expect((await call('POST', '/app/sysUser/add', { token: admin, json: { loginName: 'ALICE', password: 'Correct-Horse-42' } })).status).toBe(409);
    expect((await call('POST', '/app/sysUser/page', { token: admin, json: { pageNo: 1, pageSize: 10, params: { status: 'enabled' } } })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/page', { token: admin, json: { pageSize: 101 } })).status).toBe(400);
    expect((await call('GET', '/app/sysUser/detail', { token: admin, query: `id=${ids.user}` })).status).toBe(200);
    const edited = await call('POST', '/app/sysUser/edit', { token: admin, json: { id: ids.user, version: user.data.version, phone: '+44 20 7946 0958' } });
    expect(edited.status).toBe(200);
    expect((await call('POST', '/app/sysUser/edit', { token: admin, json: { id: ids.user, version: user.data.version, phone: '1' } })).status).toBe(409);
    expect((await call('POST', '/app/sysUser/changeStatus', { token: admin, json: { id: ids.user, status: 'enabled' } })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/resetPassword', { token: admin, json: { id: ids.user, newPassword: 'Battery-Staple-97' } })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/grantRole', { token: admin, json: { userId: ids.user, roleIds: [ids.role] } })).status).toBe(200);
    expect((await call('GET', '/app/sysUser/ownRole', { token: admin, query: `id=${ids.user}` })).status).toBe(200);

    // A user without any code: 403 on every coded operation (driven generically below).
    const bob = await call('POST', '/app/sysUser/add', { token: admin, json: { loginName: 'bob', password: 'Plain-Walrus-58' } });
    expect(bob.status).toBe(200);
    nobody = await login('bob', 'Plain-Walrus-58');
    expect((await call('POST', '/app/sysLoginUser/updatePassword', { token: nobody, json: { oldPassword: 'Plain-Walrus-58', newPassword: 'Other-Walrus-59' } })).status).toBe(200);
    nobody = await login('bob', 'Other-Walrus-59');

    // Organisations and data scope.
    const org = await call('POST', '/app/sysOrg/add', { token: admin, json: { parentId: 0, name: 'Head office', code: 'hq' } });
    expect(org.status).toBe(200);
    expect((await call('POST', '/app/sysOrg/add', { token: admin, json: { parentId: 0, name: 'Again', code: 'hq' } })).status).toBe(409);
    expect((await call('GET', '/app/sysOrg/tree', { token: admin })).status).toBe(200);
    expect((await call('GET', '/app/sysOrg/detail', { token: admin, query: `id=${org.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysOrg/detail', { token: admin, query: 'id=99999999' })).status).toBe(404);
    expect((await call('POST', '/app/sysOrg/edit', { token: admin, json: { id: org.data.id, version: org.data.version, remark: 'Main site' } })).status).toBe(200);
    expect((await call('POST', '/app/sysOrg/edit', { token: admin, json: { id: org.data.id, version: org.data.version, remark: 'stale' } })).status).toBe(409);
    expect((await call('POST', '/app/sysRole/grantDataScope', { token: admin, json: { roleId: ids.role, dataScope: 'custom', scopeOrgIds: [org.data.id] } })).status).toBe(200);
    expect((await call('POST', '/app/sysRole/grantDataScope', { token: admin, json: { roleId: ids.role, dataScope: 'all' } })).status).toBe(200);
    expect((await call('POST', '/app/sysOrg/delete', { token: admin, json: { ids: [org.data.id] } })).status).toBe(200);

    // Menus.
    const menu = await call('POST', '/app/sysMenu/add', {
      token: admin,
      json: { parentId: 0, title: 'Reports', type: 'menu', path: '/reports', component: 'reports/index', icon: 'chart', sort: 9, hidden: false, status: 'enabled' },
    });
    expect(menu.status).toBe(200);
    expect((await call('GET', '/app/sysMenu/detail', { token: admin, query: `id=${menu.data.id}` })).status).toBe(200);
    expect((await call('POST', '/app/sysMenu/edit', { token: admin, json: { id: menu.data.id, version: menu.data.version, title: 'Monthly reports' } })).status).toBe(200);
    expect((await call('POST', '/app/sysMenu/edit', { token: admin, json: { id: menu.data.id, version: menu.data.version, title: 'x' } })).status).toBe(409);
    expect((await call('POST', '/app/sysMenu/delete', { token: admin, json: { ids: [99999999] } })).status).toBe(404);
    expect((await call('POST', '/app/sysMenu/delete', { token: admin, json: { ids: [menu.data.id] } })).status).toBe(200);

    // Files: upload, page, detail, download (200, 206, 304, 416), signed link, 413, then a lost blob → 500.
    const file = await call('POST', '/app/sysFile/upload', { token: admin, body: form('report.pdf', '%PDF-1.4 monthly report', 'application/pdf') });
    expect(file.status).toBe(200);
    expect((await call('POST', '/app/sysFile/upload', { token: admin, body: form('big.bin', new Uint8Array(70_000), 'application/octet-stream') })).status).toBe(413);
    expect((await call('POST', '/app/sysFile/page', { token: admin, json: {} })).status).toBe(200);
    expect((await call('GET', '/app/sysFile/detail', { token: admin, query: `id=${file.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysFile/detail', { token: admin, query: 'id=99999999' })).status).toBe(404);
    const download = await call('GET', '/app/sysFile/download', { token: admin, query: `id=${file.data.id}` });
    expect(download.status).toBe(200);
    const etag = download.res.headers.get('etag')!;
    expect((await call('GET', '/app/sysFile/download', { token: admin, query: `id=${file.data.id}`, headers: { range: 'bytes=0-3' } })).status).toBe(206);
    expect((await call('GET', '/app/sysFile/download', { token: admin, query: `id=${file.data.id}`, headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await call('GET', '/app/sysFile/download', { token: admin, query: `id=${file.data.id}`, headers: { range: 'bytes=900-999' } })).status).toBe(416);
    expect((await call('GET', '/app/sysFile/download', { token: admin, query: 'id=99999999' })).status).toBe(404);
    const signed = new URL(file.data.url, server.baseUrl);
    expect((await call('GET', signed.pathname, { query: signed.searchParams.toString() })).status).toBe(200);

    const image = await call('POST', '/app/sysImage/upload', { token: admin, body: form('dot.png', PNG, 'image/png') });
    expect(image.status).toBe(200);
    expect((await call('POST', '/app/sysImage/upload', { token: admin, body: form('fake.png', 'not an image', 'image/png') })).status).toBe(415);
    expect((await call('POST', '/app/sysImage/page', { token: admin, json: { pageSize: 1 } })).status).toBe(200);
    expect((await call('GET', '/app/sysImage/detail', { token: admin, query: `id=${image.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysImage/preview', { token: admin, query: `id=${image.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysImage/preview', { token: admin, query: `id=${image.data.id}`, headers: { range: 'bytes=0-7' } })).status).toBe(206);

    // Backups (Bun): create, page, download, delete (before a blob goes missing below).
    const backup = await call('POST', '/app/sysBackup/create', { token: admin });
    expect(backup.status).toBe(200);
    expect((await call('POST', '/app/sysBackup/page', { token: admin, json: {} })).status).toBe(200);
    expect((await call('GET', '/app/sysBackup/download', { token: admin, query: `id=${backup.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysBackup/download', { token: admin, query: 'id=99999999' })).status).toBe(404);
    expect((await call('POST', '/app/sysBackup/delete', { token: admin, json: { ids: [backup.data.id] } })).status).toBe(200);

    // A blob lost from storage is an invariant broken: 500 envelope with the traceId.
    const lost = await call('POST', '/app/sysFile/upload', { token: admin, body: form('lost.txt', 'soon gone', 'text/plain') });
    const blob = readdirSync(join(dir, 'srv/files'), { recursive: true }).find((f) => String(f).endsWith(lost.data.sha256));
    unlinkSync(join(dir, 'srv/files', String(blob)));
    const broken = await call('GET', '/app/sysFile/download', { token: admin, query: `id=${lost.data.id}` });
    expect(broken.status).toBe(500);
    expect(broken.json.msg).toBe('Internal server error');

    expect((await call('POST', '/app/sysImage/delete', { token: admin, json: { ids: [image.data.id] } })).status).toBe(200);
    expect((await call('POST', '/app/sysFile/delete', { token: admin, json: { ids: [file.data.id] } })).status).toBe(200);

    // Sessions and logs.
    const online = await call('POST', '/app/sysOnlineUser/page', { token: admin, json: { params: { loginName: 'bob' } } });
    expect(online.status).toBe(200);
    expect((await call('POST', '/app/sysLoginLog/page', { token: admin, json: {} })).status).toBe(200);
    const ops = await call('POST', '/app/sysOpLog/page', { token: admin, json: { pageSize: 1 } });
    expect(ops.status).toBe(200);
    expect((await call('GET', '/app/sysOpLog/detail', { token: admin, query: `id=${ops.data.records[0].id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysOpLog/detail', { token: admin, query: 'id=99999999' })).status).toBe(404);
    expect((await call('POST', '/app/sysOpLog/delete', { token: admin, json: { ids: [ops.data.records[0].id] } })).status).toBe(200);
    expect((await call('POST', '/app/sysLoginLog/delete', { token: admin, json: { ids: [99999999] } })).status).toBe(200);

    // Login errors: wrong password 401, disabled 403, then the name is locked: 429 with Retry-After.
    const carol = await call('POST', '/app/sysUser/add', { token: admin, json: { loginName: 'carol', password: 'Quiet-Lantern-31', status: 'disabled' } });
    expect(carol.status).toBe(200);
    expect((await call('POST', '/auth/login', { json: { loginName: 'carol', password: 'Quiet-Lantern-31' } })).status).toBe(403);
    let last = 0;
    for (let i = 0; i < 6; i++) last = (await call('POST', '/auth/login', { json: { loginName: 'alice', password: 'wrong-password' } })).status;
    expect(last).toBe(429);
    expect((await call('POST', '/auth/login', { json: { loginName: 'x' } })).status).toBe(400);
  }, 120_000);

  test('generic drivers on every operation: no token, no code, bad input, oversized body, the example request', async () => {
    for (const { path, method, op } of checker.operations) {
      const M = method.toUpperCase();
      const takesJson = !!op.requestBody?.content?.['application/json'];
      const hasId = (op.parameters ?? []).some((p: any) => p.name === 'id' && p.in === 'query');
      const isProtected = op.security.length > 0;
      if (isProtected) expect({ op: op.operationId, status: (await call(M, path, { query: hasId ? 'id=1' : '' })).status }).toEqual({ op: op.operationId, status: 401 });
      if (isProtected && op['x-permission'] !== 'authenticated') {
        const r = await call(M, path, { token: nobody, ...(takesJson ? { json: op.requestBody.content['application/json'].example ?? {} } : {}), query: hasId ? 'id=1' : '' });
        expect({ op: op.operationId, status: r.status }).toEqual({ op: op.operationId, status: 403 });
      }
      if (takesJson) {
        expect({ op: op.operationId, status: (await call(M, path, { token: admin, json: { notAField: 1 } })).status }).toEqual({ op: op.operationId, status: 400 });
      }
      if (hasId) expect({ op: op.operationId, status: (await call(M, path, { token: admin, query: 'id=abc' })).status }).toEqual({ op: op.operationId, status: 400 });
      if (M === 'POST') {
        const big = JSON.stringify({ padding: 'x'.repeat(1024 * 1024 + 10) });
        const r = await call(M, path, { token: admin, body: big, headers: { 'content-type': takesJson || !op.requestBody ? 'application/json' : 'multipart/form-data; boundary=x' } });
        expect({ op: op.operationId, status: r.status }).toEqual({ op: op.operationId, status: 413 });
      }
      // The document's own example request: whatever the answer, it must be declared and conform.
      if (takesJson && op.operationId !== 'auth_logout') await call(M, path, { token: admin, json: op.requestBody.content['application/json'].example });
    }
  }, 300_000);

  test('logout, then the token is refused', async () => {
    expect((await call('POST', '/auth/logout', { token: nobody })).status).toBe(200);
    expect((await call('GET', '/app/sysLoginUser/getLoginUserInformation', { token: nobody })).status).toBe(401);
    expect((await call('POST', '/app/sysOnlineUser/forceLogout', { token: admin, json: { sessionIds: [crypto.randomUUID()] } })).status).toBe(200);
    expect((await call('POST', '/app/sysLoginLog/clear', { token: admin })).status).toBe(200);
    expect((await call('POST', '/app/sysOpLog/clear', { token: admin })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/delete', { token: admin, json: { ids: [ids.user!] } })).status).toBe(200);
    expect((await call('POST', '/app/sysRole/delete', { token: admin, json: { ids: [ids.role!] } })).status).toBe(200);
  });

  test('no response was undeclared or off its schema', () => {
    expect(problems).toEqual([]);
  });

  test('every operation answered a 2xx/3xx, and every declared error status but 500 was seen somewhere', () => {
    const noSuccess = checker.operations
      .map((o) => o.op.operationId as string)
      .filter((id) => ![...(checker.seen.get(id) ?? [])].some((s) => s < 400));
    // Every operation of the document, a route added later included, needs a success scenario in
    // the table above: the generic drivers alone only prove its refusals.
    expect(noSuccess).toEqual([]);
    const declared = new Set(checker.operations.flatMap((o) => Object.keys(o.op.responses).map(Number)));
    const seenAny = new Set([...checker.seen.values()].flatMap((s) => [...s]));
    // 503/507 need a busy or full database; 501 is the Workers answer of sysBackup (this is Bun).
    expect([...declared].filter((s) => !seenAny.has(s) && s !== 503 && s !== 507 && s !== 501).sort()).toEqual([]);
  });
});
