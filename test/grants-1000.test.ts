import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, makeTestApp, type D1TestApp } from './support/app.ts';

// The contract allows grants of up to 1000 ids (a role holding every menu of a large SPA). On a
// REAL D1 (workerd through Miniflare, with its 100-bound-parameter limit) such a grant must work
// for a super admin and a delegated admin, and getLoginUserInformation must still build the tree.

const PASSWORD = 'Thousand-Menus-42';
let t: D1TestApp;
let admin: string;
let menuIds: number[];

async function ok(method: string, path: string, token: string, body?: unknown) {
  const r = await t.call(method, path, { token, body });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json.msg}`);
  return r.data;
}

beforeAll(async () => {
  t = await makeTestApp({ runtime: 'd1' });
  admin = await t.login();
  // A large SPA: 1 directory with 999 buttons under it, added straight to the table.
  await t.d1
    .prepare(
      `INSERT INTO menus (id, parent_id, title, type, permission, sort)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
       SELECT 100000, 0, 'Big', 'directory', NULL, 0 UNION ALL SELECT 100000 + i, 100000, 'Button ' || i, 'button', 'big:button:' || i, i FROM n`,
    )
    .run();
  menuIds = (await t.rows<{ id: number }>('SELECT id FROM menus WHERE id >= 100000 ORDER BY id')).map((r) => r.id);
}, D1_START_MS);

describe('grants of 1000 ids on D1', () => {
  test('a super admin grants 1000 menus; ownMenu returns them; 1001 ids are refused with 400', async () => {
    expect(menuIds.length).toBe(1000);
    const role = await ok('POST', '/app/sysRole/add', admin, { name: 'Everything', code: 'everything' });
    await ok('POST', '/app/sysRole/grantMenu', admin, { roleId: role.id, menuIds });
    expect(await ok('GET', `/app/sysRole/ownMenu?id=${role.id}`, admin)).toEqual(menuIds);
    const tooMany = await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: role.id, menuIds: [...menuIds, 1] } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.msg).toContain('menuIds');
    expect(await t.count('role_menu')).toBeGreaterThanOrEqual(1000);

    // A user holding it reads 1000 permission codes and the menu tree in one response.
    const user = await ok('POST', '/app/sysUser/add', admin, { loginName: 'holder', password: PASSWORD, roleIds: [role.id] });
    const token = await t.login('holder', PASSWORD);
    const info = await ok('GET', '/app/sysLoginUser/getLoginUserInformation', token);
    expect(JSON.stringify(info)).toContain('big:button:999');
    expect(user.id).toBeGreaterThan(0);
  });

  test('a delegated admin holding 1000 menus grants and revokes them all', async () => {
    const codes = ['sys:role:grantMenu', 'sys:role:add'];
    const own = (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?))`, JSON.stringify(codes))).map((r) => r.id);
    const role = await ok('POST', '/app/sysRole/add', admin, { name: 'Delegate', code: 'delegate' });
    await ok('POST', '/app/sysRole/grantMenu', admin, { roleId: role.id, menuIds: [...own, ...menuIds.slice(0, 998)] });
    await ok('POST', '/app/sysUser/add', admin, { loginName: 'delegate', password: PASSWORD, roleIds: [role.id] });
    const token = await t.login('delegate', PASSWORD);
    const target = await ok('POST', '/app/sysRole/add', token, { name: 'Target', code: 'target' });
    const grant = menuIds.slice(0, 998);
    await ok('POST', '/app/sysRole/grantMenu', token, { roleId: target.id, menuIds: grant });
    expect(await ok('GET', `/app/sysRole/ownMenu?id=${target.id}`, admin)).toEqual(grant);
    // A menu the delegate does not hold is refused (403) and nothing changes.
    const refused = await t.call('POST', '/app/sysRole/grantMenu', { token, body: { roleId: target.id, menuIds: menuIds } });
    expect(refused.status).toBe(403);
    expect(await ok('GET', `/app/sysRole/ownMenu?id=${target.id}`, admin)).toEqual(grant);
    await ok('POST', '/app/sysRole/grantMenu', token, { roleId: target.id, menuIds: [] });
    expect(await ok('GET', `/app/sysRole/ownMenu?id=${target.id}`, admin)).toEqual([]);
  });

  test('a user is granted 1000 roles', async () => {
    await t.d1
      .prepare(
        `INSERT INTO roles (name, code, status, created_at, updated_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
         SELECT 'Bulk ' || i, 'bulk_' || i, 'enabled', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z' FROM n`,
      )
      .run();
    const roleIds = (await t.rows<{ id: number }>(`SELECT id FROM roles WHERE code LIKE 'bulk\\_%' ESCAPE '\\' ORDER BY id`)).map((r) => r.id);
    expect(roleIds.length).toBe(1000);
    const user = await ok('POST', '/app/sysUser/add', admin, { loginName: 'many_roles', password: PASSWORD });
    await ok('POST', '/app/sysUser/grantRole', admin, { userId: user.id, roleIds });
    expect(await ok('GET', `/app/sysUser/ownRole?id=${user.id}`, admin)).toEqual(roleIds);
    const added = await ok('POST', '/app/sysUser/add', admin, { loginName: 'many_roles2', password: PASSWORD, roleIds });
    expect(await ok('GET', `/app/sysUser/ownRole?id=${added.id}`, admin)).toEqual(roleIds);
  });
});
