import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, makeTestApp, type D1TestApp } from './support/app.ts';
import { get, upload } from './support/files.ts';
import { png } from './support/images.ts';
import { FakeBucket, installFixedLengthStream } from './support/fake-r2.ts';
import { r2BlobStore } from '../src/adapters/workers/r2-blobs.ts';

// Database round trips per operation on a REAL D1 (workerd through Miniflare), read from the
// Server-Timing header every response carries (db;dur=…;desc="N rt"). At the edge each round trip
// is a network hop to the D1 primary, so a regression here is latency for every user: the counts
// are asserted exactly (lower them here when an operation gets cheaper). `npm run bench` times them.
// Blobs go through the Workers R2 adapter (over an in-memory bucket), as on Workers: when an upload
// first touches storage decides when its deferred auth check runs.

const PASSWORD = 'Round-Trip-Pass-42';
let t: D1TestApp;
let admin: string;

const rt = (res: Response) => Number(res.headers.get('server-timing')?.match(/db;dur=[\d.]+;desc="(\d+) rt/)?.[1] ?? NaN);

async function op(method: string, path: string, token: string, body?: unknown) {
  const r = await t.call(method, path, { token, body });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json.msg} ${r.status === 500 ? t.logLines.filter((l) => l.includes(r.json.traceId)).join("\n") : ""}`);
  return { data: r.data, rt: rt(r.res) };
}

/** A user holding exactly the menus carrying `codes`, and their token. */
async function delegate(codes: string[], name: string) {
  const menuIds = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(codes))).map((r) => r.id);
  const role = await op('POST', '/app/sysRole/add', admin, { name: `Role ${name}`, code: `r_${name}` });
  await op('POST', '/app/sysRole/grantMenu', admin, { roleId: role.data.id, menuIds });
  const user = await op('POST', '/app/sysUser/add', admin, { loginName: name, password: PASSWORD, roleIds: [role.data.id] });
  return { token: await t.login(name, PASSWORD), userId: user.data.id as number, roleId: role.data.id as number, menuIds };
}

beforeAll(async () => {
  installFixedLengthStream();
  t = await makeTestApp({ runtime: 'd1', blobs: r2BlobStore(new FakeBucket()) });
  admin = await t.login();
}, D1_START_MS);

describe('D1 round trips per operation (workerd)', () => {
  test("each operation makes the counted round trips", async () => {
    const counts: Record<string, number> = {};
    counts['guarded detail read'] = (await op('GET', '/app/sysUser/detail?id=1', admin)).rt;
    counts['page query (with count)'] = (await op('POST', '/app/sysUser/page', admin, {})).rt;
    counts.getLoginUserInformation = (await op('GET', '/app/sysLoginUser/getLoginUserInformation', admin)).rt;
    const login = await t.call('POST', '/auth/login', { body: { loginName: 'admin', password: 'Correct-Horse-42' } });
    expect(login.status).toBe(200);
    counts.login = rt(login.res);
    const added = await op('POST', '/app/sysUser/add', admin, { loginName: 'rt_user', password: PASSWORD });
    counts['add user'] = added.rt;
    const detail = await op('GET', `/app/sysUser/detail?id=${added.data.id}`, admin);
    counts['edit user'] = (await op('POST', '/app/sysUser/edit', admin, { id: added.data.id, version: detail.data.version, nickName: 'RT' })).rt;
    counts['grant role'] = (await op('POST', '/app/sysUser/grantRole', admin, { userId: added.data.id, roleIds: [] })).rt;
    const d = await delegate(['sys:role:grantMenu', 'sys:role:add', 'sys:role:page'], 'rt_delegate');
    const target = await op('POST', '/app/sysRole/add', d.token, { name: 'Target', code: 'rt_target' });
    counts['delegated grantMenu'] = (await op('POST', '/app/sysRole/grantMenu', d.token, { roleId: target.data.id, menuIds: d.menuIds.slice(0, 2) })).rt;
    const files: number[] = [];
    for (let i = 0; i < 5; i++) files.push((await upload(t, 'sysFile', admin, { filename: `rt${i}.txt`, data: new TextEncoder().encode(`rt ${i}`) })).data.id);
    const deleted = await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: files } });
    expect(deleted.status).toBe(200);
    expect(await t.count('files')).toBe(0);
    counts['delete distinct files'] = rt(deleted.res);
    counts['upload under one R2 part'] = rt((await upload(t, 'sysFile', admin, { filename: 'small.bin', data: new Uint8Array(64 * 1024).fill(7) })).res);
    counts['upload over UNCHECKED_UPLOAD_BYTES'] = rt((await upload(t, 'sysFile', admin, { filename: 'mid.bin', data: new Uint8Array(2 * 1024 * 1024).fill(8) })).res);
    const big = await upload(t, 'sysFile', admin, { filename: 'big.bin', data: new Uint8Array(6 * 1024 * 1024).fill(9) });
    expect(big.status).toBe(200);
    counts['upload over one R2 part'] = rt(big.res);
    // A signed link: whether its session is still live is read with the file row (issue 26).
    const linked = await get(t, big.data.url);
    expect(linked.status).toBe(200);
    counts['signed link download'] = rt(linked);
    console.log(counts);
    expect(counts).toEqual({
      // Auth + data in one batch (the runner's read plan, src/db/runner.ts).
      'guarded detail read': 1,
      'page query (with count)': 1,
      getLoginUserInformation: 1,
      login: 2, // one batch before the hash (captcha, slot, locks, user), one after (outcome)
      // Pre-reads became guards of the write batch, which reads its answer back itself; the op-log
      // row is written after the response (waitUntil).
      'add user': 2,
      'edit user': 2,
      'grant role': 2,
      'delegated grantMenu': 2,
      // Auth, then one batch (blob counts recomputed, rows deleted); content goes in the sweep.
      'delete distinct files': 2,
      // Deferred auth: the auth statement rides with the content reservation, the record batch
      // carries the link reads. A body over UNCHECKED_UPLOAD_BYTES (1 MiB) or one that reaches R2
      // before its reservation (over one 5 MiB part) has its caller checked first, on its own
      // (src/modules/files/files.service.ts).
      'upload under one R2 part': 2, // 64 KiB: read whole before the reservation batch carries the auth statement
      'upload over UNCHECKED_UPLOAD_BYTES': 3, // 2 MiB: its caller is checked once 1 MiB has been read
      'upload over one R2 part': 3,
      'signed link download': 1,
    });
  }, 60_000);

  test('the op-log row written after the response is there, for a success and a refusal alike', async () => {
    const before = await t.count('op_log');
    const ok = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'rt_logged', password: PASSWORD } });
    const taken = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'rt_logged', password: PASSWORD } });
    expect([ok.status, taken.status]).toEqual([200, 409]);
    expect(rt(ok.res)).toBe(2);
    const rows = await t.rows<{ action: string; status: number; trace_id: string }>(
      `SELECT action, status, trace_id FROM op_log ORDER BY id DESC LIMIT 2`,
    );
    expect(await t.count('op_log')).toBe(before + 2);
    expect(rows.reverse()).toEqual([
      { action: 'add', status: 200, trace_id: ok.json.traceId ?? ok.res.headers.get('x-trace-id') },
      { action: 'add', status: 409, trace_id: taken.json.traceId },
    ]);
  }, 60_000);

  // Last: it changes the admin's password and logs a session out.
  test('every endpoint of the contract, as a super admin and as a delegated admin, makes the counted round trips', async () => {
    const su = await t.login();
    const ok = async (...args: Parameters<typeof op>) => (await op(...args)).data;
    const branch = await ok('POST', '/app/sysOrg/add', su, { name: 'Branch', code: 'branch' });
    const allMenus = (await t.rows<{ id: number }>(`SELECT id FROM menus`)).map((r) => r.id);
    const role = await ok('POST', '/app/sysRole/add', su, { name: 'Deleg', code: 'deleg' });
    await ok('POST', '/app/sysRole/grantMenu', su, { roleId: role.id, menuIds: allMenus });
    await ok('POST', '/app/sysRole/grantDataScope', su, { roleId: role.id, dataScope: 'orgAndBelow' });
    await ok('POST', '/app/sysUser/add', su, { loginName: 'deleg', password: PASSWORD, roleIds: [role.id], orgId: branch.id });
    const deleg = await t.login('deleg', PASSWORD);
    const callers = [su, deleg] as const;
    const out: Record<string, [number, number]> = {};
    async function both(name: string, run: (token: string, i: number) => Promise<Response>) {
      const r: number[] = [];
      for (let i = 0; i < 2; i++) {
        const res = await run(callers[i]!, i);
        const st = res.status;
        r.push(st === 200 ? rt(res) : -st);
      }
      out[name] = r as [number, number];
    }
    const call = (method: string, path: string, body?: unknown) => async (token: string) => (await t.call(method, path, { token, body })).res;
    // targets
    const users = [] as number[];
    for (let i = 0; i < 8; i++) users.push((await ok('POST', '/app/sysUser/add', su, { loginName: `v${i}`, password: PASSWORD, orgId: branch.id })).id);
    const roles = [] as number[];
    for (let i = 0; i < 8; i++) roles.push((await ok('POST', '/app/sysRole/add', su, { name: `R${i}`, code: `r${i}` })).id);
    const file = (await upload(t, 'sysFile', deleg, { filename: 'x.txt', data: 'x' })).data;
    const image = (await upload(t, 'sysImage', deleg, { filename: 'a.png', type: 'image/png', data: png(3, 2) })).data;
    const images = [(await upload(t, 'sysImage', su, { filename: 'b.png', type: 'image/png', data: png(4, 2) })).data.id, image.id];
    const opLogId = (await t.rows<{ id: number }>(`SELECT max(id) AS id FROM op_log WHERE operator_name = 'deleg'`))[0]!.id;
    await both('GET getLoginUserInformation', call('GET', '/app/sysLoginUser/getLoginUserInformation'));
    await both('POST sysUser/page', call('POST', '/app/sysUser/page', {}));
    await both('GET sysUser/detail', call('GET', `/app/sysUser/detail?id=${users[0]}`));
    await both('GET sysUser/ownRole', call('GET', `/app/sysUser/ownRole?id=${users[0]}`));
    await both('POST sysRole/page', call('POST', '/app/sysRole/page', {}));
    await both('GET sysRole/list', call('GET', '/app/sysRole/list'));
    await both('GET sysRole/detail', call('GET', `/app/sysRole/detail?id=${roles[0]}`));
    await both('GET sysRole/ownMenu', call('GET', `/app/sysRole/ownMenu?id=${role.id}`));
    await both('GET sysOrg/tree', call('GET', '/app/sysOrg/tree'));
    await both('GET sysOrg/detail', call('GET', `/app/sysOrg/detail?id=${branch.id}`));
    await both('GET sysMenu/tree', call('GET', '/app/sysMenu/tree'));
    await both('GET sysMenu/detail', call('GET', `/app/sysMenu/detail?id=${allMenus[0]}`));
    await both('POST sysFile/page', call('POST', '/app/sysFile/page', {}));
    await both('GET sysFile/detail', call('GET', `/app/sysFile/detail?id=${file.id}`));
    await both('GET sysFile/download', async (token) => get(t, `/app/sysFile/download?id=${file.id}`, token));
    await both('POST sysImage/page', call('POST', '/app/sysImage/page', {}));
    await both('GET sysImage/detail', call('GET', `/app/sysImage/detail?id=${image.id}`));
    await both('GET sysImage/preview', async (token) => get(t, `/app/sysImage/preview?id=${image.id}`, token));
    await both('POST sysLoginLog/page', call('POST', '/app/sysLoginLog/page', {}));
    await both('POST sysOpLog/page', call('POST', '/app/sysOpLog/page', {}));
    // A name prefix, newest first: the plan is chosen inside the page's statement (PageOptions.seek).
    await both('POST sysLoginLog/page loginName', call('POST', '/app/sysLoginLog/page', { params: { loginName: 'ad' } }));
    await both('POST sysOpLog/page operatorName', call('POST', '/app/sysOpLog/page', { params: { operatorName: 'de' } }));
    await both('GET sysOpLog/detail', call('GET', `/app/sysOpLog/detail?id=${opLogId}`));
    await both('POST sysOnlineUser/page', call('POST', '/app/sysOnlineUser/page', {}));
    // writes
    await both('POST sysUser/add', (token, i) => call('POST', '/app/sysUser/add', { loginName: `added${i}`, password: PASSWORD, orgId: branch.id })(token));
    await both('POST sysUser/edit', async (token, i) => call('POST', '/app/sysUser/edit', { id: users[i], version: 1, nickName: 'E' })(token));
    await both('POST sysUser/changeStatus', async (token, i) => call('POST', '/app/sysUser/changeStatus', { id: users[2 + i], status: 'disabled' })(token));
    await both('POST sysUser/resetPassword', async (token, i) => call('POST', '/app/sysUser/resetPassword', { id: users[2 + i], newPassword: 'New-Pass-Word-42' })(token));
    await both('POST sysUser/grantRole', async (token, i) => call('POST', '/app/sysUser/grantRole', { userId: users[4 + i], roleIds: [roles[0]] })(token));
    await both('POST sysUser/delete', async (token, i) => call('POST', '/app/sysUser/delete', { ids: [users[6 + i]] })(token));
    await both('POST sysRole/add', (token, i) => call('POST', '/app/sysRole/add', { name: `A${i}`, code: `a${i}` })(token));
    await both('POST sysRole/edit', (token, i) => call('POST', '/app/sysRole/edit', { id: roles[1 + i], version: 1, name: `E${i}` })(token));
    await both('POST sysRole/changeStatus', (token, i) => call('POST', '/app/sysRole/changeStatus', { id: roles[1 + i], status: 'disabled' })(token));
    await both('POST sysRole/grantMenu', (token, i) => call('POST', '/app/sysRole/grantMenu', { roleId: roles[3 + i], menuIds: allMenus.slice(0, 3) })(token));
    await both('POST sysRole/grantDataScope', (token, i) => call('POST', '/app/sysRole/grantDataScope', { roleId: roles[3 + i], dataScope: 'org' })(token));
    await both('POST sysRole/delete', (token, i) => call('POST', '/app/sysRole/delete', { ids: [roles[5 + i]] })(token));
    const orgs: number[] = [];
    await both('POST sysOrg/add', async (token, i) => {
      const r = await t.call('POST', '/app/sysOrg/add', { token, body: { parentId: branch.id, name: `O${i}`, code: `o${i}` } });
      orgs.push(r.data?.id);
      return r.res;
    });
    await both('POST sysOrg/edit', (token, i) => call('POST', '/app/sysOrg/edit', { id: orgs[i], version: 1, name: `OE${i}` })(token));
    await both('POST sysOrg/delete', (token, i) => call('POST', '/app/sysOrg/delete', { ids: [orgs[i]] })(token));
    const menus: number[] = [];
    await both('POST sysMenu/add', async (token, i) => {
      const r = await t.call('POST', '/app/sysMenu/add', { token, body: { title: `M${i}`, type: 'directory' } });
      menus.push(r.data?.id);
      return r.res;
    });
    await both('POST sysMenu/edit', (token, i) => call('POST', '/app/sysMenu/edit', { id: menus[i], version: 1, title: `ME${i}` })(token));
    await both('POST sysMenu/delete', (token, i) => call('POST', '/app/sysMenu/delete', { ids: [menus[i]] })(token));
    await both('POST sysFile/upload', async (token, i) => (await upload(t, 'sysFile', token, { filename: `u${i}.txt`, data: `u${i}` })).res);
    const f2 = [(await upload(t, 'sysFile', su, { filename: 'd0.txt', data: 'd0' })).data.id, (await upload(t, 'sysFile', deleg, { filename: 'd1.txt', data: 'd1' })).data.id];
    await both('POST sysFile/delete', (token, i) => call('POST', '/app/sysFile/delete', { ids: [f2[i]] })(token));
    await both('POST sysImage/upload', async (token, i) => (await upload(t, 'sysImage', token, { filename: `u${i}.png`, type: 'image/png', data: png(2 + i, 2) })).res);
    await both('POST sysImage/delete', (token, i) => call('POST', '/app/sysImage/delete', { ids: [images[i]] })(token));
    await both('POST sysLoginUser/updateInfo', call('POST', '/app/sysLoginUser/updateInfo', { nickName: 'Me' }));
    const logins = await t.rows<{ id: number }>(`SELECT id FROM login_log ORDER BY id DESC LIMIT 2`);
    await both('POST sysLoginLog/delete', (token, i) => call('POST', '/app/sysLoginLog/delete', { ids: [logins[i]!.id] })(token));
    await both('POST sysLoginLog/clear', call('POST', '/app/sysLoginLog/clear', {}));
    const ops = await t.rows<{ id: number }>(`SELECT id FROM op_log ORDER BY id DESC LIMIT 2`);
    await both('POST sysOpLog/delete', (token, i) => call('POST', '/app/sysOpLog/delete', { ids: [ops[i]!.id] })(token));
    await both('POST sysOpLog/clear', call('POST', '/app/sysOpLog/clear', {}));
    const s1 = await t.login('v1', PASSWORD);
    void s1;
    const sessions = await t.rows<{ id: string }>(`SELECT s.id FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.login_name = 'v1' AND s.revoked_at IS NULL`);
    await both('POST sysOnlineUser/forceLogout', (token) => call('POST', '/app/sysOnlineUser/forceLogout', { sessionIds: [sessions[0]!.id] })(token));
    await both('POST sysLoginUser/updatePassword', async (token, i) => call('POST', '/app/sysLoginUser/updatePassword', { oldPassword: i ? PASSWORD : 'Correct-Horse-42', newPassword: 'Brand-New-Pass-42' })(token));
    await both('POST auth/logout', call('POST', '/auth/logout', {}));
    expect(out).toEqual({
      // [super admin, delegated admin holding every code with scope orgAndBelow]. Reads: the auth
      // statement rides in the read plan's batch (src/db/runner.ts); the delegated users page reads
      // its scope first (a second trip, see users.repo.ts). Writes: see the note of issue 14.
      'GET getLoginUserInformation': [1, 1],
      'POST sysUser/page': [1, 2],
      'GET sysUser/detail': [1, 1],
      'GET sysUser/ownRole': [1, 1],
      'POST sysRole/page': [1, 1],
      'GET sysRole/list': [1, 1],
      'GET sysRole/detail': [1, 1],
      'GET sysRole/ownMenu': [1, 1],
      'GET sysOrg/tree': [1, 1],
      'GET sysOrg/detail': [1, 1],
      'GET sysMenu/tree': [1, 1],
      'GET sysMenu/detail': [1, 1],
      'POST sysFile/page': [1, 1],
      'GET sysFile/detail': [1, 1],
      'GET sysFile/download': [1, 1],
      'POST sysImage/page': [1, 1],
      'GET sysImage/detail': [1, 1],
      'GET sysImage/preview': [1, 1],
      'POST sysLoginLog/page': [1, 1],
      'POST sysOpLog/page': [1, 1],
      'POST sysLoginLog/page loginName': [1, 1],
      'POST sysOpLog/page operatorName': [1, 1],
      'GET sysOpLog/detail': [1, 1],
      'POST sysOnlineUser/page': [1, 1],
      'POST sysUser/add': [2, 2],
      'POST sysUser/edit': [2, 2],
      'POST sysUser/changeStatus': [2, 2],
      // The pre-read plan carries the auth statement (src/db/runner.ts),
      // the write batch is headed by the caller's check as guards (a revoked token cannot write).
      'POST sysUser/resetPassword': [2, 2],
      'POST sysUser/grantRole': [2, 2],
      'POST sysUser/delete': [2, 2],
      'POST sysRole/add': [2, 2],
      'POST sysRole/edit': [2, 2],
      'POST sysRole/changeStatus': [2, 2],
      'POST sysRole/grantMenu': [2, 2],
      'POST sysRole/grantDataScope': [2, 2],
      'POST sysRole/delete': [2, 2],
      'POST sysOrg/add': [2, 2],
      'POST sysOrg/edit': [2, 2],
      'POST sysOrg/delete': [2, 2],
      'POST sysMenu/add': [2, 2],
      'POST sysMenu/edit': [2, 2], // the current row's read carries the auth statement
      'POST sysMenu/delete': [2, 2],
      // Deferred auth for writes: auth + the content row's reservation (taken before the bytes are
      // put, so a sweep in another isolate cannot delete them), then the record with the link reads.
      'POST sysFile/upload': [2, 2],
      'POST sysFile/delete': [2, 2],
      'POST sysImage/upload': [2, 2],
      'POST sysImage/delete': [2, 2],
      // The caller's own row only (WritePlan.anyCaller): the auth statement travels in the write's batch.
      'POST sysLoginUser/updateInfo': [1, 1],
      'POST sysLoginLog/delete': [2, 2],
      'POST sysLoginLog/clear': [2, 2],
      'POST sysOpLog/delete': [2, 2],
      'POST sysOpLog/clear': [2, 2],
      'POST sysOnlineUser/forceLogout': [2, 2],
      // auth + row + lock state + this attempt's count in one batch (WritePlan.anyCaller), then the
      // two hashes (verify, new), then the write batch.
      'POST sysLoginUser/updatePassword': [2, 2],
      'POST auth/logout': [1, 1], // the caller's own session only (WritePlan.anyCaller)
    });
  }, 120_000);
});
