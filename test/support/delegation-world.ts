import { expect } from 'bun:test';
import type { AnyTestApp } from './app.ts';

/**
 * The small world the delegation tests act in (issue 26), on either runtime: one organisation tree
 *
 *     co ─┬─ sales ── sales1
 *         └─ support
 *
 * made by the admin, and helpers that make roles, users and logged-in callers through the API as
 * the admin, and check that a refused request changed nothing.
 */
export const WORLD_PASSWORD = 'Valid-Passw0rd-9';
const TABLES = ['users', 'user_role', 'roles', 'role_menu', 'role_scope_org', 'menus', 'sessions', 'orgs', 'login_log'];

export async function delegationWorld(t: AnyTestApp, admin: string, prefix: string) {
  let seq = 0;
  const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
  const org = { co: 0, sales: 0, sales1: 0, support: 0 };
  for (const [k, parent] of [['co', 0], ['sales', 'co'], ['sales1', 'sales'], ['support', 'co']] as const) {
    const r = await post('/app/sysOrg/add', { name: k, code: `${prefix}_${k}`, parentId: parent === 0 ? 0 : org[parent] });
    expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
    org[k] = r.data.id;
  }
  const menuIds = async (codes: readonly string[]) =>
    (await t.rows<{ id: number }>(`SELECT id FROM menus WHERE permission IN (SELECT value FROM json_each(?)) ORDER BY id`, JSON.stringify(codes))).map((r) => r.id);
  const snap = async () => JSON.stringify(await Promise.all(TABLES.map((tb) => t.rows(`SELECT * FROM ${tb} ORDER BY 1, 2`))));

  /** A role carrying `codes`, with a data scope (and a status). */
  async function role(codes: readonly string[], dataScope = 'self', opts: { scopeOrgIds?: number[]; status?: 'enabled' | 'disabled' } = {}) {
    const code = `${prefix}_role_${++seq}`;
    const r = await post('/app/sysRole/add', { name: code, code, dataScope, scopeOrgIds: opts.scopeOrgIds ?? [], status: opts.status ?? 'enabled' });
    expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
    if (codes.length) expect((await post('/app/sysRole/grantMenu', { roleId: r.data.id, menuIds: await menuIds(codes) })).status).toBe(200);
    return r.data.id as number;
  }

  /** A user in `orgId` holding `roleIds`, logged in. */
  async function user(orgId: number | null, roleIds: number[] = []) {
    const loginName = `${prefix}_user_${++seq}`;
    const r = await post('/app/sysUser/add', { loginName, password: WORLD_PASSWORD, orgId, roleIds });
    expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
    return { id: r.data.id as number, loginName, token: await t.login(loginName, WORLD_PASSWORD) };
  }

  /** A logged-in caller holding a fresh role with `codes` and `dataScope` (and `more` roles), in `orgId`. */
  async function caller(codes: readonly string[], dataScope: string, orgId: number | null, more: number[] = []) {
    const roleId = await role(codes, dataScope);
    return { ...(await user(orgId, [roleId, ...more])), roleId };
  }

  /** `path` as `token` answers `status` (its message matching `msg`) and changes nothing (the op log aside). */
  async function refused(path: string, body: unknown, token: string, status: number, msg?: RegExp) {
    const before = await snap();
    const r = await post(path, body, token);
    expect(`${path} ${r.status} ${r.json.msg}`).toStartWith(`${path} ${status} `);
    if (msg) expect(r.json.msg).toMatch(msg);
    expect(await snap()).toBe(before);
    return r;
  }

  const next = () => ++seq;
  return { org, post, menuIds, role, user, caller, refused, next };
}
