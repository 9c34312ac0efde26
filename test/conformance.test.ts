// Conformance: a live Bun server (`bun src/entry/bun.ts`) is driven through every operation of its
// own /openapi.json — success and error answers — and every response is checked against the
// document (status declared, media type declared, body valid by ajv, described headers declared
// exactly where they are sent). Anything undeclared fails the test.
//
// Generic drivers cover every operation the document lists, including ones added later: no token
// (401), a caller without codes (403), a malformed body or id (400), a body over 1 MiB (413), the
// operation's own request example. A scenario table adds the successes and the specific errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bunServer, E2E_ADMIN_PASSWORD, type Target } from './e2e/servers.ts';
import { openApiChecker, type Operation } from './support/openapi-check.ts';
import { SoftAuthenticator } from './support/soft-authenticator.ts';
import { base32Decode } from '../src/core/base32.ts';
import { totpAt } from '../src/core/totp.ts';

// Passkeys: the servers below name this SPA origin as their relying party's.
const SPA_ORIGIN = 'http://localhost:5173';
/** The code an authenticator app shows `steps` steps from now (the servers run on the real clock). */
const totpCode = (secret: Uint8Array, steps = 0) => totpAt(secret, Date.now() + steps * 30_000);

const dir = mkdtempSync(join(tmpdir(), 'edge-conformance-'));
let server: Target;
/** The same server with the captcha on, for the captcha's own answers (429 after the limit). */
let captchaServer: Target;
/**
 * A server whose data lives on its own small tmpfs (a private mount namespace: `unshare -rm`), so
 * the test can fill that filesystem for real (ENOSPC → SQLITE_FULL → 507) without touching the
 * machine's disk. The test reaches the mount through /proc/<pid>/root.
 */
let fullServer: Target;
const fullDir = join(dir, 'full');
/**
 * Whether this machine lets an unprivileged process mount a tmpfs in its own namespaces (user
 * namespaces may be disabled in some containers). Without it the 507 test is skipped, its reason in
 * its name, and the 507s count as skipped in the coverage check below, rather than failing CI on a
 * machine fact.
 */
const SMALL_DISK = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs "$0"', dir], { stdio: 'ignore' }).status === 0;
const NO_SMALL_DISK = 'skipped: this machine does not allow `unshare -rm` with a tmpfs mount, so no real full filesystem';
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

async function login(loginName = 'admin', password = E2E_ADMIN_PASSWORD, base?: string): Promise<string> {
  const r = await call('POST', '/auth/login', { base, json: { loginName, password } });
  if (r.status !== 200) throw new Error(`login ${loginName}: ${r.status} ${r.json?.msg}`);
  return r.data.token;
}

/**
 * Every write operation, each with a request that really changes something on `base` (a no-op
 * write, e.g. deleting an unknown id, needs no lock and no space). Creates the records it needs
 * first, while the server is healthy.
 */
async function writesOn(base: string) {
  const token = await login('admin', E2E_ADMIN_PASSWORD, base);
  const spare = await login('admin', E2E_ADMIN_PASSWORD, base); // a second session: logout, forceLogout
  const ok = async (method: string, path: string, init: Init = {}) => {
    const r = await call(method, path, { base, token, ...init });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json?.msg}`);
    return r.data;
  };
  const user = await ok('POST', '/app/sysUser/add', { json: { loginName: 'dora', password: 'Correct-Horse-43' } });
  const role = await ok('POST', '/app/sysRole/add', { json: { name: 'Archivist', code: 'archivist' } });
  const menu = await ok('POST', '/app/sysMenu/add', { json: { parentId: 0, title: 'Archive', type: 'menu', path: '/archive', component: 'archive/index' } });
  const org = await ok('POST', '/app/sysOrg/add', { json: { parentId: 0, name: 'Branch', code: 'branch' } });
  const file = await ok('POST', '/app/sysFile/upload', { body: form('notes.txt', 'minutes of the meeting', 'text/plain') });
  const image = await ok('POST', '/app/sysImage/upload', { body: form('dot.png', PNG, 'image/png') });
  const backup = await ok('POST', '/app/sysBackup/create');
  const loginLog = (await ok('POST', '/app/sysLoginLog/page', { json: { pageSize: 1 } })).records[0].id;
  const opLog = (await ok('POST', '/app/sysOpLog/page', { json: { pageSize: 1 } })).records[0].id;
  const sessions = (await ok('POST', '/app/sysOnlineUser/page', { json: { pageSize: 100 } })).records as { sessionId: string }[];
  const job = (await ok('POST', '/app/sysJob/page', { json: { params: { name: 'expiredCleanup' } } })).records[0];
  const jobRun = await ok('POST', '/app/sysJob/run', { json: { id: job.id } });
  // Standard modules (issue 27): records each write below really changes.
  const dictType = await ok('POST', '/app/sysDictType/add', { json: { name: 'Locked', code: 'w_locked' } });
  const dictItem = await ok('POST', '/app/sysDictData/add', { json: { typeCode: 'w_locked', label: 'A', value: 'a' } });
  const param = await ok('POST', '/app/sysConfig/add', { json: { name: 'Locked', key: 'w.locked', value: '1' } });
  const notice = await ok('POST', '/app/sysNotice/add', { json: { title: 'Locked', type: 'notice', status: 'published' } });
  const post = await ok('POST', '/app/sysPost/add', { json: { code: 'w_locked', name: 'Locked' } });
  const apiKey = await ok('POST', '/app/sysApiKey/add', { json: { name: 'Locked', codes: ['sys:user:page'] } });
  const initPassword = (await ok('POST', '/app/sysConfig/page', { json: { params: { key: 'sys.user.initPassword' } } })).records[0];
  await ok('POST', '/app/sysConfig/edit', { json: { id: initPassword.id, version: initPassword.version, value: 'Imported-Passw0rd-7' } });
  const importForm = () => {
    const f = new FormData();
    f.set('file', new File(['Login name*\r\nimported_w\r\n'], 'users.csv', { type: 'text/csv' }));
    return f;
  };
  // Second factor: a user with an enrolment under way, passkey options answered, a passkey to remove.
  const mfaUser = await ok('POST', '/app/sysUser/add', { json: { loginName: 'wmfa', password: 'Correct-Horse-45' } });
  const mfaToken = await login('wmfa', 'Correct-Horse-45', base);
  const asMfa = async (path: string, json?: unknown) => {
    const r = await call('POST', path, { base, token: mfaToken, ...(json !== undefined ? { json } : {}) });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json?.msg}`);
    return r.data;
  };
  const pending = base32Decode((await asMfa('/app/sysLoginUser/mfa/totp/start')).secret)!;
  const device = await SoftAuthenticator.create();
  const kept = await asMfa('/app/sysLoginUser/mfa/passkey/register', { response: await device.register(await asMfa('/app/sysLoginUser/mfa/passkey/options'), SPA_ORIGIN) });
  const second = await SoftAuthenticator.create();
  const answered = await second.register(await asMfa('/app/sysLoginUser/mfa/passkey/options'), SPA_ORIGIN);
  const mfaChallenge = (await call('POST', '/auth/login', { base, json: { loginName: 'wmfa', password: 'Correct-Horse-45' } })).data.challenge as string;
  const m = (path: string, json?: () => Promise<unknown>) => async () => call('POST', path, { base, token: mfaToken, ...(json ? { json: await json() } : {}) });
  const w = (path: string, init: Init = {}) => () => call('POST', path, { base, token, ...init });
  return {
    sysLoginUser_mfa_totp_start: m('/app/sysLoginUser/mfa/totp/start'),
    sysLoginUser_mfa_totp_confirm: m('/app/sysLoginUser/mfa/totp/confirm', async () => ({ code: await totpCode(pending) })),
    // Both count the try first (a write), whatever the code.
    sysLoginUser_mfa_totp_disable: m('/app/sysLoginUser/mfa/totp/disable', async () => ({ password: 'Correct-Horse-45', code: '000000' })),
    sysLoginUser_mfa_recoveryCodes: m('/app/sysLoginUser/mfa/recoveryCodes', async () => ({ code: '000000' })),
    sysLoginUser_mfa_passkey_options: m('/app/sysLoginUser/mfa/passkey/options'),
    sysLoginUser_mfa_passkey_register: m('/app/sysLoginUser/mfa/passkey/register', async () => ({ response: answered })),
    sysLoginUser_mfa_passkey_delete: m('/app/sysLoginUser/mfa/passkey/delete', async () => ({ id: kept.passkey.id })),
    sysUser_resetMfa: w('/app/sysUser/resetMfa', { json: { id: mfaUser.id } }),
    // The second login step counts its try first; the passkey options store their challenge.
    auth_login_verify: () => call('POST', '/auth/login/verify', { base, json: { challenge: mfaChallenge, code: '000000' } }),
    auth_login_passkeyOptions: () => call('POST', '/auth/login/passkeyOptions', { base, json: { challenge: mfaChallenge } }),
    auth_login: () => call('POST', '/auth/login', { base, json: { loginName: 'admin', password: E2E_ADMIN_PASSWORD } }),
    auth_logout: () => call('POST', '/auth/logout', { base, token: spare }),
    sysLoginUser_updateInfo: w('/app/sysLoginUser/updateInfo', { json: { nickName: 'Keeper' } }),
    sysLoginUser_updatePassword: w('/app/sysLoginUser/updatePassword', { json: { oldPassword: E2E_ADMIN_PASSWORD, newPassword: 'Fresh-Lantern-77' } }),
    sysUser_add: w('/app/sysUser/add', { json: { loginName: 'erin', password: 'Correct-Horse-44' } }),
    sysUser_edit: w('/app/sysUser/edit', { json: { id: user.id, version: user.version, nickName: 'Dora M.' } }),
    sysUser_delete: w('/app/sysUser/delete', { json: { ids: [user.id] } }),
    sysUser_changeStatus: w('/app/sysUser/changeStatus', { json: { id: user.id, status: 'disabled' } }),
    sysUser_resetPassword: w('/app/sysUser/resetPassword', { json: { id: user.id, newPassword: 'Battery-Staple-98' } }),
    sysUser_import: () => call('POST', '/app/sysUser/import', { base, token, body: importForm() }),
    sysUser_grantRole: w('/app/sysUser/grantRole', { json: { userId: user.id, roleIds: [role.id] } }),
    sysRole_add: w('/app/sysRole/add', { json: { name: 'Clerk', code: 'clerk' } }),
    sysRole_edit: w('/app/sysRole/edit', { json: { id: role.id, version: role.version, remark: 'Keeps the archive' } }),
    sysRole_delete: w('/app/sysRole/delete', { json: { ids: [role.id] } }),
    sysRole_changeStatus: w('/app/sysRole/changeStatus', { json: { id: role.id, status: 'disabled' } }),
    sysRole_grantMenu: w('/app/sysRole/grantMenu', { json: { roleId: role.id, menuIds: [menu.id] } }),
    sysRole_grantDataScope: w('/app/sysRole/grantDataScope', { json: { roleId: role.id, dataScope: 'custom', scopeOrgIds: [org.id] } }),
    sysMenu_add: w('/app/sysMenu/add', { json: { parentId: 0, title: 'Ledger', type: 'menu', path: '/ledger', component: 'ledger/index' } }),
    sysMenu_edit: w('/app/sysMenu/edit', { json: { id: menu.id, version: menu.version, title: 'Old archive' } }),
    sysMenu_delete: w('/app/sysMenu/delete', { json: { ids: [menu.id] } }),
    sysOrg_add: w('/app/sysOrg/add', { json: { parentId: 0, name: 'Annex', code: 'annex' } }),
    sysOrg_edit: w('/app/sysOrg/edit', { json: { id: org.id, version: org.version, remark: 'North site' } }),
    sysOrg_delete: w('/app/sysOrg/delete', { json: { ids: [org.id] } }),
    sysOnlineUser_forceLogout: w('/app/sysOnlineUser/forceLogout', { json: { sessionIds: sessions.map((x) => x.sessionId) } }),
    sysLoginLog_delete: w('/app/sysLoginLog/delete', { json: { ids: [loginLog] } }),
    sysLoginLog_clear: w('/app/sysLoginLog/clear'),
    sysOpLog_delete: w('/app/sysOpLog/delete', { json: { ids: [opLog] } }),
    sysOpLog_clear: w('/app/sysOpLog/clear'),
    sysFile_upload: w('/app/sysFile/upload', { body: form('agenda.txt', 'next meeting', 'text/plain') }),
    sysFile_delete: w('/app/sysFile/delete', { json: { ids: [file.id] } }),
    sysImage_upload: w('/app/sysImage/upload', { body: form('dot2.png', PNG, 'image/png') }),
    sysImage_delete: w('/app/sysImage/delete', { json: { ids: [image.id] } }),
    sysBackup_create: w('/app/sysBackup/create'),
    sysBackup_delete: w('/app/sysBackup/delete', { json: { ids: [backup.id] } }),
    sysJob_edit: w('/app/sysJob/edit', { json: { id: job.id, version: job.version, misfirePolicy: 'skip' } }),
    sysJob_changeStatus: w('/app/sysJob/changeStatus', { json: { id: job.id, status: 'disabled' } }),
    sysJob_run: w('/app/sysJob/run', { json: { id: job.id } }),
    sysJobLog_delete: w('/app/sysJobLog/delete', { json: { ids: [jobRun.id] } }),
    sysJobLog_clear: w('/app/sysJobLog/clear'),
    sysDictType_add: w('/app/sysDictType/add', { json: { name: 'Other', code: 'w_other' } }),
    sysDictType_edit: w('/app/sysDictType/edit', { json: { id: dictType.id, version: dictType.version, remark: 'Edited' } }),
    sysDictType_delete: w('/app/sysDictType/delete', { json: { ids: [dictType.id] } }),
    sysDictData_add: w('/app/sysDictData/add', { json: { typeCode: 'w_locked', label: 'B', value: 'b' } }),
    sysDictData_edit: w('/app/sysDictData/edit', { json: { id: dictItem.id, version: dictItem.version, label: 'Alpha' } }),
    sysDictData_delete: w('/app/sysDictData/delete', { json: { ids: [dictItem.id] } }),
    sysConfig_add: w('/app/sysConfig/add', { json: { name: 'Other', key: 'w.other' } }),
    sysConfig_edit: w('/app/sysConfig/edit', { json: { id: param.id, version: param.version, value: '2' } }),
    sysConfig_delete: w('/app/sysConfig/delete', { json: { ids: [param.id] } }),
    sysNotice_add: w('/app/sysNotice/add', { json: { title: 'Other', type: 'notice' } }),
    sysNotice_edit: w('/app/sysNotice/edit', { json: { id: notice.id, version: notice.version, title: 'Edited' } }),
    sysNotice_delete: w('/app/sysNotice/delete', { json: { ids: [notice.id] } }),
    sysNotice_markRead: w('/app/sysNotice/markRead', { json: { ids: [notice.id] } }),
    sysPost_add: w('/app/sysPost/add', { json: { code: 'w_other', name: 'Other' } }),
    sysPost_edit: w('/app/sysPost/edit', { json: { id: post.id, version: post.version, name: 'Edited' } }),
    sysPost_delete: w('/app/sysPost/delete', { json: { ids: [post.id] } }),
    sysApiKey_add: w('/app/sysApiKey/add', { json: { name: 'Script', codes: ['sys:user:page'] } }),
    sysApiKey_revoke: w('/app/sysApiKey/revoke', { json: { ids: [apiKey.id] } }),
  } as Record<string, () => ReturnType<typeof call>>;
}

/** Runs every write; returns those whose status was not `want`. */
async function allRefused(writes: Record<string, () => ReturnType<typeof call>>, want: number) {
  const off: { op: string; status: number }[] = [];
  for (const [op, run] of Object.entries(writes)) {
    const { status } = await run();
    if (status !== want) off.push({ op, status });
  }
  return off;
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
  mkdirSync(fullDir);
  const smallDisk = (argv: string[]) => ['unshare', '-rm', 'sh', '-c', 'mount -t tmpfs -o size=16m tmpfs "$0" && exec "$@"', fullDir, ...argv];
  // SQLITE_BUSY_TIMEOUT_MS: a write waits at most 50 ms for another connection's lock (503 after).
  const limits = { MAX_UPLOAD_BYTES: '65536', MAX_IMAGE_BYTES: '65536', BACKUP_EVERY_HOURS: '0', SQLITE_BUSY_TIMEOUT_MS: '50', WEBAUTHN_ORIGINS: SPA_ORIGIN };
  [server, captchaServer, fullServer] = await Promise.all([
    bunServer(join(dir, 'srv'), false, { ...limits, BACKUP_DIR: join(dir, 'backups') }),
    // MIN_FREE_MB at its maximum (1 TiB): its readiness probe answers 503 (below the free-space floor).
    bunServer(join(dir, 'captcha'), true, { CAPTCHA_PER_MINUTE: '3', MIN_FREE_MB: String(1024 * 1024), SQLITE_BUSY_TIMEOUT_MS: '50' }),
    // MIN_FREE_MB 0: uploads are not refused up front, so they meet the full disk while streaming.
    SMALL_DISK ? bunServer(fullDir, false, { ...limits, BACKUP_DIR: join(fullDir, 'backups'), MIN_FREE_MB: '0' }, smallDisk) : (undefined as unknown as Target),
  ]);
  doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
  checker = openApiChecker(doc);
}, 60_000);

afterAll(async () => {
  await Promise.all([server?.stop(), captchaServer?.stop(), fullServer?.stop()]);
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
    expect((await call('GET', '/health/ready', { base })).status).toBe(503); // below its MIN_FREE_MB
    // The captcha writes (its rate limit and the challenge): busy → 503; a lost table → 500.
    const captchaDb = new Database(join(dir, 'captcha/admin.db'));
    try {
      captchaDb.run('BEGIN IMMEDIATE');
      expect((await call('GET', '/auth/captcha', { base })).status).toBe(503);
      captchaDb.run('ROLLBACK');
      captchaDb.run('ALTER TABLE rate_limits RENAME TO rate_limits_lost');
      expect((await call('GET', '/auth/captcha', { base })).status).toBe(500);
    } finally {
      if (captchaDb.inTransaction) captchaDb.run('ROLLBACK');
      if (captchaDb.query("SELECT 1 FROM sqlite_master WHERE name = 'rate_limits_lost'").get()) captchaDb.run('ALTER TABLE rate_limits_lost RENAME TO rate_limits');
      captchaDb.close();
    }

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
    expect((await call('POST', '/app/sysMenu/edit', { token: admin, json: { id: 99999999, version: 1, title: 'Nowhere' } })).status).toBe(404);
    // Route names are unique (case-insensitively): a second `UserManagement` is refused.
    const taken = String(tree.data[0].name).toUpperCase();
    expect((await call('POST', '/app/sysMenu/add', { token: admin, json: { parentId: 0, title: 'Again', type: 'menu', name: taken, path: '/again', component: 'again/index' } })).status).toBe(409);
    expect((await call('POST', '/app/sysMenu/delete', { token: admin, json: { ids: [menu.data.id] } })).status).toBe(200);

    // Standard modules (issue 27): dictionaries (with ETag/304), parameters, notices, posts.
    const ok = async (method: string, path: string, init: Init, status = 200) => {
      const r = await call(method, path, { token: admin, ...init });
      expect(`${method} ${path} ${r.status}`).toBe(`${method} ${path} ${status}`);
      return r;
    };
    const dictType = (await ok('POST', '/app/sysDictType/add', { json: { name: 'Colours', code: 'app_colour' } })).data;
    await ok('POST', '/app/sysDictType/add', { json: { name: 'Again', code: 'app_colour' } }, 409);
    await ok('POST', '/app/sysDictType/page', { json: { params: { code: 'colour' } } });
    await ok('GET', '/app/sysDictType/detail', { query: `id=${dictType.id}` });
    await ok('POST', '/app/sysDictType/edit', { json: { id: dictType.id, version: dictType.version, remark: 'Paint' } });
    await ok('POST', '/app/sysDictType/edit', { json: { id: dictType.id, version: dictType.version, remark: 'stale' } }, 409);
    await ok('POST', '/app/sysDictType/edit', { json: { id: 99999999, version: 1, remark: 'nowhere' } }, 404);
    const dictItem = (await ok('POST', '/app/sysDictData/add', { json: { typeCode: 'app_colour', label: 'Red', value: 'red', tagType: 'danger' } })).data;
    await ok('POST', '/app/sysDictData/add', { json: { typeCode: 'app_colour', label: 'Again', value: 'red' } }, 409);
    await ok('POST', '/app/sysDictData/page', { json: { params: { typeCode: 'app_colour' } } });
    await ok('GET', '/app/sysDictData/detail', { query: `id=${dictItem.id}` });
    await ok('POST', '/app/sysDictData/edit', { json: { id: dictItem.id, version: dictItem.version, label: 'Scarlet' } });
    await ok('POST', '/app/sysDictData/edit', { json: { id: dictItem.id, version: dictItem.version, label: 'stale' } }, 409);
    await ok('POST', '/app/sysDictData/edit', { json: { id: 99999999, version: 1, label: 'nowhere' } }, 404);
    const items = await ok('GET', '/app/sysDict/items', { query: 'code=app_colour' });
    await ok('GET', '/app/sysDict/items', { query: 'code=app_colour', headers: { 'if-none-match': items.res.headers.get('etag')! } }, 304);
    await ok('GET', '/app/sysDict/items', { query: 'code=Not%20A%20Code' }, 400);
    const dicts = await ok('GET', '/app/sysDict/all', {});
    await ok('GET', '/app/sysDict/all', { headers: { 'if-none-match': dicts.res.headers.get('etag')! } }, 304);
    await ok('POST', '/app/sysDictData/delete', { json: { ids: [dictItem.id] } });
    await ok('POST', '/app/sysDictType/delete', { json: { ids: [dictType.id] } });
    const param = (await ok('POST', '/app/sysConfig/add', { json: { name: 'Theme', key: 'app.theme', value: 'dark' } })).data;
    await ok('POST', '/app/sysConfig/add', { json: { name: 'Again', key: 'app.theme' } }, 409);
    await ok('POST', '/app/sysConfig/page', { json: { params: { type: 'custom' } } });
    await ok('GET', '/app/sysConfig/detail', { query: `id=${param.id}` });
    await ok('POST', '/app/sysConfig/edit', { json: { id: param.id, version: param.version, value: 'light' } });
    await ok('POST', '/app/sysConfig/edit', { json: { id: param.id, version: param.version, value: 'stale' } }, 409);
    await ok('POST', '/app/sysConfig/edit', { json: { id: 99999999, version: 1, value: 'x' } }, 404);
    await ok('GET', '/app/sysConfig/value', { query: 'key=app.theme' });
    await ok('GET', '/app/sysConfig/value', { query: 'key=app.nothing' }, 404);
    await ok('GET', '/app/sysConfig/value', { query: 'key=not%20a%20key' }, 400);
    await ok('POST', '/app/sysConfig/delete', { json: { ids: [param.id] } });
    const notice = (await ok('POST', '/app/sysNotice/add', { json: { title: 'Maintenance', type: 'notice', content: '<p>Saturday</p><script>x</script>', status: 'published' } })).data;
    await ok('POST', '/app/sysNotice/page', { json: { params: { status: 'published' } } });
    await ok('GET', '/app/sysNotice/detail', { query: `id=${notice.id}` });
    await ok('POST', '/app/sysNotice/edit', { json: { id: notice.id, version: notice.version, title: 'Maintenance window' } });
    await ok('POST', '/app/sysNotice/edit', { json: { id: notice.id, version: notice.version, title: 'stale' } }, 409);
    await ok('POST', '/app/sysNotice/edit', { json: { id: 99999999, version: 1, title: 'nowhere' } }, 404);
    await ok('GET', '/app/sysNotice/latest', { query: 'limit=3' });
    await ok('GET', '/app/sysNotice/latest', { query: 'limit=0' }, 400);
    await ok('POST', '/app/sysNotice/markRead', { json: { ids: [notice.id] } });
    await ok('POST', '/app/sysNotice/delete', { json: { ids: [notice.id] } });
    const post = (await ok('POST', '/app/sysPost/add', { json: { code: 'engineer', name: 'Engineer' } })).data;
    await ok('POST', '/app/sysPost/add', { json: { code: 'ENGINEER', name: 'Again' } }, 409);
    await ok('POST', '/app/sysPost/page', { json: {} });
    const apiKey = (await ok('POST', '/app/sysApiKey/add', { json: { name: 'Nightly sync', codes: ['sys:user:page'], allowedIps: ['10.0.0.0/8'] } })).data;
    await ok('POST', '/app/sysApiKey/add', { json: { name: 'Bad block', codes: ['sys:user:page'], allowedIps: ['10.0.0.1/8'] } }, 400);
    await ok('POST', '/app/sysApiKey/page', { json: { params: { status: 'active' } } });
    await ok('POST', '/app/sysApiKey/revoke', { json: { ids: [apiKey.id] } });
    await ok('GET', '/app/sysPost/list', {});
    await ok('GET', '/app/sysPost/detail', { query: `id=${post.id}` });
    await ok('POST', '/app/sysPost/edit', { json: { id: post.id, version: post.version, name: 'Software engineer' } });
    await ok('POST', '/app/sysPost/edit', { json: { id: post.id, version: post.version, name: 'stale' } }, 409);
    await ok('POST', '/app/sysPost/edit', { json: { id: 99999999, version: 1, name: 'nowhere' } }, 404);
    const holder = (await ok('GET', '/app/sysUser/detail', { query: `id=${ids.user}` })).data;
    await ok('POST', '/app/sysUser/edit', { json: { id: ids.user, version: holder.version, postIds: [post.id] } });
    await ok('POST', '/app/sysPost/delete', { json: { ids: [post.id] } }, 400);
    await ok('POST', '/app/sysUser/edit', { json: { id: ids.user, version: holder.version + 1, postIds: [] } });
    await ok('POST', '/app/sysPost/delete', { json: { ids: [post.id] } });

    // Export and import (issue 27, item 6): every list as a download, the users import (dry run,
    // a file over MAX_UPLOAD_BYTES: 413), and its template.
    for (const list of ['sysUser', 'sysRole', 'sysPost', 'sysDictType', 'sysDictData', 'sysConfig', 'sysNotice', 'sysLoginLog', 'sysOpLog', 'sysOnlineUser', 'sysJob', 'sysJobLog']) {
      const got = await ok('POST', `/app/${list}/export`, { json: { format: list.length % 2 ? 'csv' : 'xlsx' } });
      expect(got.res.headers.get('content-disposition')).toStartWith('attachment; ');
    }
    await ok('GET', '/app/sysUser/importTemplate', { query: 'format=csv' });
    const init = (await ok('POST', '/app/sysConfig/page', { json: { params: { key: 'sys.user.initPassword' } } })).data.records[0];
    await ok('POST', '/app/sysConfig/edit', { json: { id: init.id, version: init.version, value: 'Imported-Passw0rd-7' } });
    const sheet = new FormData();
    sheet.set('file', new File(['Login name*,Nick name\r\nimported_one,One\r\n'], 'users.csv', { type: 'text/csv' }));
    sheet.set('dryRun', 'true');
    expect((await ok('POST', '/app/sysUser/import', { body: sheet })).data).toEqual({ created: 1, updated: 0, failed: 0, errors: [] });
    const huge = new FormData();
    huge.set('file', new File([new Uint8Array(70_000)], 'users.csv', { type: 'text/csv' }));
    await ok('POST', '/app/sysUser/import', { body: huge }, 413);
    await ok('GET', '/app/sysUser/importTemplate', { query: 'format=pdf' }, 400);
    const strange = new FormData();
    strange.set('file', new File(['who,what\r\na,b\r\n'], 'users.csv', { type: 'text/csv' }));
    await ok('POST', '/app/sysUser/import', { body: strange }, 400);

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
    const shown = await call('GET', '/app/sysImage/preview', { token: admin, query: `id=${image.data.id}` });
    expect((await call('GET', '/app/sysImage/preview', { token: admin, query: `id=${image.data.id}`, headers: { 'if-none-match': shown.res.headers.get('etag')! } })).status).toBe(304);
    expect((await call('GET', '/app/sysImage/preview', { token: admin, query: `id=${image.data.id}`, headers: { range: 'bytes=5000-6000' } })).status).toBe(416);
    // A multipart body without its `file` part.
    const noFile = new FormData();
    noFile.append('other', 'x');
    expect((await call('POST', '/app/sysImage/upload', { token: admin, body: noFile })).status).toBe(400);
    expect((await call('POST', '/app/sysFile/upload', { token: admin, body: noFile })).status).toBe(400);

    // Backups (Bun): create, page, download, delete (before a blob goes missing below).
    const backup = await call('POST', '/app/sysBackup/create', { token: admin });
    expect(backup.status).toBe(200);
    expect((await call('POST', '/app/sysBackup/page', { token: admin, json: {} })).status).toBe(200);
    expect((await call('GET', '/app/sysBackup/download', { token: admin, query: `id=${backup.data.id}` })).status).toBe(200);
    expect((await call('GET', '/app/sysBackup/download', { token: admin, query: 'id=99999999' })).status).toBe(404);
    expect((await call('POST', '/app/sysBackup/delete', { token: admin, json: { ids: [backup.data.id] } })).status).toBe(200);
    // One backup at a time: while one is running (a row the test plants), a second is refused.
    const planted = new Database(join(dir, 'srv/admin.db'));
    try {
      planted.run("INSERT INTO backups (name, status, trigger_type, created_at) VALUES ('planted.tar', 'running', 'manual', '2026-01-01T00:00:00.000Z')");
      expect((await call('POST', '/app/sysBackup/create', { token: admin })).status).toBe(409);
    } finally {
      planted.run("DELETE FROM backups WHERE name = 'planted.tar'");
      planted.close();
    }

    // A blob lost from storage is an invariant broken: 500 envelope with the traceId.
    const lost = await call('POST', '/app/sysFile/upload', { token: admin, body: form('lost.txt', 'soon gone', 'text/plain') });
    const blob = readdirSync(join(dir, 'srv/files'), { recursive: true }).find((f) => String(f).endsWith(lost.data.sha256));
    unlinkSync(join(dir, 'srv/files', String(blob)));
    const broken = await call('GET', '/app/sysFile/download', { token: admin, query: `id=${lost.data.id}` });
    expect(broken.status).toBe(500);
    expect(broken.json.msg).toBe('Internal server error');
    // Its record goes (a backup later must not trip over the missing blob).
    expect((await call('POST', '/app/sysFile/delete', { token: admin, json: { ids: [lost.data.id] } })).status).toBe(200);

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

    // Scheduled jobs: page, detail, edit (409 stale, 404), changeStatus, run now (409 while a run
    // holds the job: a claim the test plants), the job log.
    const jobs = await call('POST', '/app/sysJob/page', { token: admin, json: { params: { name: 'blobSweep' } } });
    expect(jobs.status).toBe(200);
    const job = jobs.data.records[0];
    expect((await call('GET', '/app/sysJob/detail', { token: admin, query: `id=${job.id}` })).status).toBe(200);
    expect((await call('POST', '/app/sysJob/edit', { token: admin, json: { id: job.id, version: job.version, cron: '*/15 * * * *' } })).status).toBe(200);
    expect((await call('POST', '/app/sysJob/edit', { token: admin, json: { id: job.id, version: job.version, cron: '*/20 * * * *' } })).status).toBe(409);
    expect((await call('POST', '/app/sysJob/edit', { token: admin, json: { id: 99999999, version: 1 } })).status).toBe(404);
    expect((await call('POST', '/app/sysJob/changeStatus', { token: admin, json: { id: job.id, status: 'enabled' } })).status).toBe(200);
    expect((await call('POST', '/app/sysJob/changeStatus', { token: admin, json: { id: 99999999, status: 'enabled' } })).status).toBe(404);
    const ran = await call('POST', '/app/sysJob/run', { token: admin, json: { id: job.id } });
    expect(ran.status).toBe(200);
    expect((await call('POST', '/app/sysJob/run', { token: admin, json: { id: 99999999 } })).status).toBe(404);
    const claimed = new Database(join(dir, 'srv/admin.db'));
    try {
      claimed.run(`UPDATE jobs SET claimed_at = ?, claim_id = 'planted' WHERE id = ?`, [new Date().toISOString(), job.id]);
      expect((await call('POST', '/app/sysJob/run', { token: admin, json: { id: job.id } })).status).toBe(409);
    } finally {
      claimed.run(`UPDATE jobs SET claimed_at = NULL, claim_id = NULL WHERE id = ?`, [job.id]);
      claimed.close();
    }
    expect((await call('POST', '/app/sysJobLog/page', { token: admin, json: { params: { jobId: job.id } } })).status).toBe(200);
    expect((await call('POST', '/app/sysJobLog/delete', { token: admin, json: { ids: [ran.data.id] } })).status).toBe(200);
    expect((await call('POST', '/app/sysJobLog/clear', { token: admin })).status).toBe(200);

    // Second factor (contract: "Second factor"): enrol, the login challenge and its errors, recovery
    // codes, disabling (429 after wrong codes), passkeys, an admin's reset.
    const mfa = async (loginName: string) => {
      const u = (await ok('POST', '/app/sysUser/add', { json: { loginName, password: 'Correct-Horse-46' } })).data;
      const t = await login(loginName, 'Correct-Horse-46');
      const start = await call('POST', '/app/sysLoginUser/mfa/totp/start', { token: t });
      expect(start.status).toBe(200);
      const secret = base32Decode(start.data.secret)!;
      const confirmed = await call('POST', '/app/sysLoginUser/mfa/totp/confirm', { token: t, json: { code: await totpCode(secret) } });
      expect(confirmed.status).toBe(200);
      expect((await call('POST', '/app/sysLoginUser/mfa/totp/start', { token: t })).status).toBe(400); // already on
      return { id: u.id as number, token: t, secret, codes: confirmed.data.recoveryCodes as string[] };
    };
    const mia = await mfa('mia');
    expect((await call('GET', '/app/sysLoginUser/mfa/status', { token: mia.token })).status).toBe(200);
    const challenge = async (loginName: string) => (await call('POST', '/auth/login', { json: { loginName, password: 'Correct-Horse-46' } })).data.challenge as string;
    expect((await call('POST', '/auth/login/verify', { json: { challenge: await challenge('mia'), code: await totpCode(mia.secret, 1) } })).status).toBe(200);
    expect((await call('POST', '/auth/login/verify', { json: { challenge: 'nothing.bWlh', code: '123456' } })).status).toBe(401);
    expect((await call('POST', '/auth/login/verify', { json: { challenge: 'x', code: '1' } })).status).toBe(400);
    expect((await call('POST', '/auth/login/passkeyOptions', { json: { challenge: 'nothing.bWlh' } })).status).toBe(401);
    expect((await call('POST', '/auth/login/passkeyOptions', { json: { challenge: await challenge('mia') } })).status).toBe(400); // no passkey
    const pete = await mfa('pete');
    expect((await call('POST', '/app/sysLoginUser/mfa/recoveryCodes', { token: pete.token, json: { code: await totpCode(pete.secret, 1) } })).status).toBe(200);
    const ugo = await mfa('ugo');
    expect((await call('POST', '/app/sysLoginUser/mfa/totp/disable', { token: ugo.token, json: { password: 'Correct-Horse-46', code: await totpCode(ugo.secret, 1) } })).status).toBe(200);
    let wrongs = 0;
    for (let i = 0; i < 6; i++) wrongs = (await call('POST', '/app/sysLoginUser/mfa/totp/disable', { token: pete.token, json: { password: 'Correct-Horse-46', code: '000000' } })).status;
    expect(wrongs).toBe(429);
    // Disabled between the password and the code: 403.
    const petesChallenge = await challenge('pete');
    await ok('POST', '/app/sysUser/changeStatus', { json: { id: pete.id, status: 'disabled' } });
    expect((await call('POST', '/auth/login/verify', { json: { challenge: petesChallenge, recoveryCode: pete.codes[0] } })).status).toBe(403);
    // Wrong codes lock the name: 429.
    const miaChallenge = await challenge('mia');
    let locked = 0;
    for (let i = 0; i < 6; i++) locked = (await call('POST', '/auth/login/verify', { json: { challenge: miaChallenge, code: '000000' } })).status;
    expect(locked).toBe(429);
    // Passkeys.
    const device = await SoftAuthenticator.create();
    const options = await call('POST', '/app/sysLoginUser/mfa/passkey/options', { token: ugo.token });
    expect(options.status).toBe(200);
    const registered = await call('POST', '/app/sysLoginUser/mfa/passkey/register', { token: ugo.token, json: { response: await device.register(options.data, SPA_ORIGIN), name: 'Key' } });
    expect(registered.status).toBe(200);
    const ugoChallenge = await challenge('ugo');
    const request = await call('POST', '/auth/login/passkeyOptions', { json: { challenge: ugoChallenge } });
    expect(request.status).toBe(200);
    expect((await call('POST', '/auth/login/verify', { json: { challenge: ugoChallenge, passkey: await device.assert(request.data, SPA_ORIGIN) } })).status).toBe(200);
    const ugoAgain = await challenge('ugo'); // for the lost table below, while Ugo still has a passkey
    expect((await call('POST', '/app/sysLoginUser/mfa/passkey/delete', { token: ugo.token, json: { id: 99999999 } })).status).toBe(404);
    expect((await call('POST', '/app/sysLoginUser/mfa/passkey/delete', { token: ugo.token, json: { id: registered.data.passkey.id } })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/resetMfa', { token: admin, json: { id: 99999999 } })).status).toBe(404);
    expect((await call('POST', '/app/sysUser/resetMfa', { token: admin, json: { id: mia.id } })).status).toBe(200);
    expect((await call('POST', '/app/sysUser/grantRole', { token: admin, json: { userId: 99999999, roleIds: [] } })).status).toBe(404);
    // The challenges' table lost: both login steps that read it answer the 500 envelope.
    const lostChallenges = new Database(join(dir, 'srv/admin.db'));
    lostChallenges.run('ALTER TABLE mfa_challenges RENAME TO mfa_challenges_lost');
    try {
      expect((await call('POST', '/auth/login/verify', { json: { challenge: ugoAgain, code: '123456' } })).status).toBe(500);
      expect((await call('POST', '/auth/login/passkeyOptions', { json: { challenge: ugoAgain } })).status).toBe(500);
    } finally {
      lostChallenges.run('ALTER TABLE mfa_challenges_lost RENAME TO mfa_challenges');
      lostChallenges.close();
    }

    // Login errors: wrong password 401, disabled 403, then the name is locked: 429 with Retry-After.
    const carol = await call('POST', '/app/sysUser/add', { token: admin, json: { loginName: 'carol', password: 'Quiet-Lantern-31', status: 'disabled' } });
    expect(carol.status).toBe(200);
    expect((await call('POST', '/auth/login', { json: { loginName: 'carol', password: 'Quiet-Lantern-31' } })).status).toBe(403);
    let last = 0;
    for (let i = 0; i < 6; i++) last = (await call('POST', '/auth/login', { json: { loginName: 'alice', password: 'wrong-password' } })).status;
    expect(last).toBe(429);
    expect((await call('POST', '/auth/login', { json: { loginName: 'x' } })).status).toBe(400);
  }, 120_000);

  test('503: every write while another connection holds the write lock beyond the wait (50 ms), with Retry-After', async () => {
    const writes = await writesOn(server.baseUrl);
    const other = new Database(join(dir, 'srv/admin.db'));
    other.run('BEGIN IMMEDIATE');
    try {
      expect(await allRefused(writes, 503)).toEqual([]);
      // Reads do not wait for a writer (WAL): they keep working.
      expect((await call('POST', '/app/sysUser/page', { token: admin, json: {} })).status).toBe(200);
    } finally {
      other.run('ROLLBACK');
      other.close();
    }
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
      if (hasId && op.responses['404']) {
        expect({ op: op.operationId, status: (await call(M, path, { token: admin, query: 'id=99999999' })).status }).toEqual({ op: op.operationId, status: 404 });
      }
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

  test.skipIf(!SMALL_DISK)(`507: every write on a full filesystem (database and file storage); reads keep working${SMALL_DISK ? '' : ` (${NO_SMALL_DISK})`}`, async () => {
    const base = fullServer.baseUrl;
    const writes = await writesOn(base);
    const token = await login('admin', E2E_ADMIN_PASSWORD, base);
    // The server's tmpfs, seen through its mount namespace; filled to the last byte.
    const filler = `/proc/${fullServer.pid}/root${fullDir}/filler`;
    const fd = openSync(filler, 'w');
    try {
      for (const size of [1 << 20, 1 << 12, 1 << 9, 1]) {
        const chunk = new Uint8Array(size);
        try {
          for (;;) writeSync(fd, chunk);
        } catch (e) {
          if ((e as { code?: string }).code !== 'ENOSPC') throw e;
        }
      }
    } finally {
      closeSync(fd);
    }
    try {
      expect(await allRefused(writes, 507)).toEqual([]);
      expect((await call('POST', '/app/sysUser/page', { base, token, json: {} })).status).toBe(200);
    } finally {
      unlinkSync(filler);
    }
  }, 120_000);

  test('500: a table lost under the running server (sessions): every operation that reads it answers the 500 envelope', async () => {
    const db = new Database(join(dir, 'srv/admin.db'));
    db.run('ALTER TABLE sessions RENAME TO sessions_lost');
    try {
      const answers: string[] = [];
      for (const { path, method, op } of checker.operations) {
        const M = method.toUpperCase();
        // A login that gets as far as creating its session (the example's name may be locked by now).
        const json =
          op.operationId === 'auth_login'
            ? { loginName: 'bob', password: 'Other-Walrus-59' }
            : op.operationId === 'auth_login_verify' // a name not locked by now (bob)
              ? { challenge: 'q83vEjRWeJAq83vEjRWeJAq83vEjRWeJAq.Ym9i', code: '123456' }
              : op.requestBody?.content?.['application/json']?.example;
        const hasId = (op.parameters ?? []).some((p: any) => p.name === 'id' && p.in === 'query');
        const r = await call(M, path, { token: admin, query: hasId ? 'id=1' : '', ...(json !== undefined ? { json } : M === 'POST' && op.requestBody ? { body: form('x.txt', 'x', 'text/plain') } : {}) });
        answers.push(`${op.operationId} ${r.status}`);
      }
      const no500 = answers.filter((a) => !a.endsWith(' 500'));
      // The second login step reads its challenge, not a session (a session is written only on success).
      expect(no500).toEqual(['health 200', 'health_ready 200', 'auth_captcha 200', 'auth_login_verify 401', 'auth_login_passkeyOptions 401']);
    } finally {
      db.run('ALTER TABLE sessions_lost RENAME TO sessions');
      db.close();
    }
  }, 120_000);

  test('no response was undeclared or off its schema', () => {
    expect(problems).toEqual([]);
  });

  test('every operation answered a 2xx/3xx and each error status it declares, but for the named skips', () => {
    const noSuccess = checker.operations
      .map((o) => o.op.operationId as string)
      .filter((id) => ![...(checker.seen.get(id) ?? [])].some((s) => s < 400));
    // Every operation of the document, a route added later included, needs a success scenario in
    // the table above: the generic drivers alone only prove its refusals.
    expect(noSuccess).toEqual([]);
    // Declared statuses no test here can provoke, each with the reason. A rule, so that routes added
    // later are held to it: an (operation, status) pair outside these must be driven above.
    const SKIPS: [reason: string, applies: (o: Operation, status: number) => boolean][] = [
      ['liveness answers from memory: nothing in it can fail', (o, s) => o.op.operationId === 'health' && s === 500],
      ['the readiness probe turns every failure of its checks into 503 (driven)', (o, s) => o.op.operationId === 'health_ready' && s === 500],
      [
        'a read is never busy: in WAL mode readers do not wait for the writer the test holds (only for WAL recovery, which the test cannot hold)',
        (o, s) => s === 503 && (o.method === 'get' || o.path.endsWith('/page') || o.path.endsWith('/export')) && !['health_ready', 'auth_captcha'].includes(o.op.operationId),
      ],
      ['the captcha stores its challenge (507 on a full disk), but the full-disk server runs with the captcha off so that it can log in', (o, s) => o.op.operationId === 'auth_captcha' && s === 507],
      [
        'takes no input and no business rule refuses it (400 is among the guard\'s shared errors)',
        (o, s) => s === 400 && !o.op.requestBody && !(o.op.parameters ?? []).length && o.op.security.length > 0,
      ],
      ['needs a login only: there is no permission code to lack (403 is among the guard\'s shared errors)', (o, s) => s === 403 && o.op['x-permission'] === 'authenticated'],
      ['backups on Workers (no backup directory there); this server is Bun', (o, s) => s === 501 && (o.path.startsWith('/app/sysBackup/') || o.path === '/app/sysJob/run')],
      ...(SMALL_DISK ? [] : [[`507 on a full disk (${NO_SMALL_DISK})`, (_o: Operation, s: number) => s === 507] as [string, (o: Operation, status: number) => boolean]]),
    ];
    const missing = checker.operations.flatMap((o) =>
      Object.keys(o.op.responses)
        .map(Number)
        .filter((status) => !checker.seen.get(o.op.operationId)?.has(status))
        .map((status) => ({ o, status })),
    );
    const unexplained = missing.filter(({ o, status }) => !SKIPS.some(([, applies]) => applies(o, status))).map(({ o, status }) => `${o.op.operationId} ${status}`);
    expect(unexplained).toEqual([]);
    // And each skip still names something: a rule that no longer applies is removed, not kept.
    const used = SKIPS.filter(([, applies]) => missing.some(({ o, status }) => applies(o, status))).map(([reason]) => reason);
    expect(used).toEqual(SKIPS.map(([reason]) => reason));
    for (const [reason, applies] of SKIPS) {
      const names = missing.filter(({ o, status }) => applies(o, status)).map(({ o, status }) => `${o.op.operationId} ${status}`);
      console.log(`skipped (${reason}): ${names.join(', ')}`);
    }
  });
});
