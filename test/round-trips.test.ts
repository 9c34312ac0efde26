import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, makeTestApp, type D1TestApp } from './support/app.ts';
import { upload } from './support/files.ts';

// Database round trips per operation on a REAL D1 (workerd through Miniflare), read from the
// Server-Timing header every response carries (db;dur=…;desc="N rt"). At the edge each round trip
// is a network hop to the D1 primary, so a regression here is latency for every user: the counts
// are asserted exactly (lower them here when an operation gets cheaper). `npm run bench` times them.

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
  t = await makeTestApp({ runtime: 'd1' });
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
    console.log(counts);
    expect(counts).toEqual({
      // Auth + data in one batch (deferred auth, src/http/auth-gate.ts).
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
});
