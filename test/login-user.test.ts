import { describe, expect, test } from 'bun:test';
import { ADMIN_PASSWORD, makeTestApp } from './support/app.ts';

const t = await makeTestApp();
const INFO = '/app/sysLoginUser/getLoginUserInformation';

/** A plain user holding one role granted the given menu ids. */
async function plainUser(name: string, menuIds: number[], roleStatus = 'enabled') {
  const hash = await t.deps.hasher.hash('Plain-User-Pass-1');
  const now = '2026-01-01T00:00:00.000Z';
  const user = t.sqlite
    .query(`INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at) VALUES (?, ?, ?, 'enabled', ?, ?) RETURNING id`)
    .get(name, hash, name, now, now) as { id: number };
  const role = t.sqlite
    .query(`INSERT INTO roles (name, code, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id`)
    .get(`${name} role`, `${name}Role`, roleStatus, now, now) as { id: number };
  t.sqlite.query('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)').run(user.id, role.id);
  for (const m of menuIds) t.sqlite.query('INSERT INTO role_menu (role_id, menu_id) VALUES (?, ?)').run(role.id, m);
  return { userId: user.id, roleId: role.id, token: await t.login(name, 'Plain-User-Pass-1') };
}

const menuId = (permission: string) => (t.sqlite.query('SELECT id FROM menus WHERE permission = ?').get(permission) as { id: number }).id;

describe('getLoginUserInformation', () => {
  test('super admin: public user fields, role codes, ["*"], the whole enabled menu tree', async () => {
    const r = await t.call('GET', INFO, { token: await t.login() });
    expect(r.status).toBe(200);
    expect(r.data.user).toMatchObject({ id: 1, loginName: 'admin', status: 'enabled' });
    expect(JSON.stringify(r.data)).not.toContain('password');
    expect(JSON.stringify(r.data)).not.toContain('$argon2');
    expect(r.data.roles).toEqual(['superAdmin']);
    expect(r.data.permissions).toEqual(['*']);
    expect(r.data.menus.map((m: { title: string }) => m.title)).toEqual(['User management', 'Permission management', 'System management']);
    const users = r.data.menus[0].children[0];
    expect(Object.keys(users).sort()).toEqual(['children', 'component', 'hidden', 'icon', 'id', 'keepAlive', 'name', 'parentId', 'path', 'sort', 'title', 'type']);
    expect(users).toMatchObject({ title: 'Users', type: 'menu', path: '/user/list', component: 'user/UserList', hidden: false, children: [] });
  });

  test('a plain user sees their codes and only the branches leading to them', async () => {
    const u = await plainUser('viewer', [menuId('sys:user:page'), menuId('sys:loginLog:page')]);
    const r = await t.call('GET', INFO, { token: u.token });
    expect(r.data.roles).toEqual(['viewerRole']);
    expect(r.data.permissions).toEqual(['sys:loginLog:page', 'sys:user:page']);
    const titles = (nodes: any[]): string[] => nodes.flatMap((n) => [n.title, ...titles(n.children)]);
    expect(titles(r.data.menus)).toEqual(['User management', 'Users', 'System management', 'Login log']);
  });

  test('grants, disabled roles and disabled menus apply on the very next request', async () => {
    const u = await plainUser('changer', [menuId('sys:role:page')]);
    expect((await t.call('GET', INFO, { token: u.token })).data.permissions).toEqual(['sys:role:page']);
    t.sqlite.run(`UPDATE menus SET status = 'disabled' WHERE permission = 'sys:role:page'`);
    expect((await t.call('GET', INFO, { token: u.token })).data.permissions).toEqual([]);
    t.sqlite.run(`UPDATE menus SET status = 'enabled' WHERE permission = 'sys:role:page'`);
    t.sqlite.query(`UPDATE roles SET status = 'disabled' WHERE id = ?`).run(u.roleId);
    const r = await t.call('GET', INFO, { token: u.token });
    expect(r.data.roles).toEqual([]);
    expect(r.data.permissions).toEqual([]);
    expect(r.data.menus).toEqual([]);
  });

  test('no token → 401', async () => {
    expect((await t.call('GET', INFO)).status).toBe(401);
  });
});

describe('updateInfo', () => {
  test('updates own profile, bumps version, writes one op-log row', async () => {
    const token = await t.login();
    const before = (await t.call('GET', INFO, { token })).data.user;
    const r = await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body: { nickName: '  Boss  ', email: 'boss@example.com', phone: '+1 555 0100' } });
    expect(r.status).toBe(200);
    expect(r.data).toMatchObject({ nickName: 'Boss', email: 'boss@example.com', phone: '+1 555 0100', version: before.version + 1 });
    const op = t.sqlite.query(`SELECT * FROM op_log WHERE trace_id = ?`).get(r.json.traceId) as Record<string, unknown>;
    expect(op).toMatchObject({ module: 'sysLoginUser', action: 'updateInfo', method: 'POST', operator_id: 1, operator_name: 'admin', status: 200, error_msg: null });
    expect(JSON.parse(op.params as string)).toEqual({ nickName: 'Boss', email: 'boss@example.com', phone: '+1 555 0100' });
  });

  test('strings are trimmed, the email too', async () => {
    const token = await t.login();
    const r = await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body: { email: '  trimmed@example.com  ' } });
    expect(r.status).toBe(200);
    expect(r.data.email).toBe('trimmed@example.com');
  });

  test.each([
    [{ id: 5 }, 'id'],
    [{ passwordHash: 'x' }, 'passwordHash'],
    [{ status: 'disabled' }, 'status'],
    [{ email: 'not-an-email' }, 'email'],
    [{ nickName: '' }, 'nickName'],
    [{ nickName: 7 }, 'nickName'],
    [{ phone: "1; DROP TABLE users" }, 'phone'],
  ])('refuses %j with 400 naming %s, changes nothing, logs the failure', async (body, field) => {
    const token = await t.login();
    const before = t.sqlite.query('SELECT * FROM users WHERE id = 1').get();
    const r = await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain(field);
    expect(t.sqlite.query('SELECT * FROM users WHERE id = 1').get()).toEqual(before);
    const op = t.sqlite.query(`SELECT status, error_msg FROM op_log WHERE trace_id = ?`).get(r.json.traceId) as { status: number; error_msg: string };
    expect(op).toEqual({ status: 400, error_msg: r.json.msg });
  });
});

describe('avatar: http(s) URLs and paths on this service only', () => {
  const refused = [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    '  javascript:alert(1)',
    'java\tscript:alert(1)',
    'vbscript:msgbox(1)',
    'data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+',
    'data:image/png;base64,iVBORw0KGgo=',
    '//evil.example/a.png',
    '/\\evil.example/a.png',
    'ftp://files.example/a.png',
    'file:///etc/passwd',
    'https://',
    'a.png',
  ];
  test.each(refused)('refuses %p and changes nothing', async (avatar) => {
    const token = await t.login();
    const before = t.sqlite.query('SELECT avatar, version FROM users WHERE id = 1').get();
    const r = await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body: { avatar } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toStartWith('avatar:');
    expect(t.sqlite.query('SELECT avatar, version FROM users WHERE id = 1').get()).toEqual(before);
  });

  test.each(['https://cdn.example/u/1.png', 'http://intranet.example/a.jpg', '/app/sysImage/preview?id=3&exp=99&sig=abc', '', null])('accepts %p', async (avatar) => {
    const token = await t.login();
    const r = await t.call('POST', '/app/sysLoginUser/updateInfo', { token, body: { avatar } });
    expect(r.status).toBe(200);
    expect(r.data.avatar).toBe(avatar);
  });

  test('sysUser/add applies the same rule', async () => {
    const token = await t.login();
    const r = await t.call('POST', '/app/sysUser/add', { token, body: { loginName: 'avatarx', password: 'Avatar-Pass-123', avatar: 'javascript:alert(1)' } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toStartWith('avatar:');
  });
});

describe('updatePassword', () => {
  test('wrong old password → 400 and the caller stays logged in', async () => {
    const token = await t.login();
    const r = await t.call('POST', '/app/sysLoginUser/updatePassword', { token, body: { oldPassword: 'nope-nope-nope', newPassword: 'Brand-New-Pass-9' } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain('oldPassword');
    expect((await t.call('GET', INFO, { token })).status).toBe(200);
  });

  test.each([
    ['short1!', 'at least 8'],
    ['admin', 'at least 8'],
    ['password123', 'too common'],
    ['ADMIN123', 'too common'],
    ['x'.repeat(129), 'at most 128'],
    ['        ', 'visible character'],
    ['\u200b'.repeat(10), 'visible character'],
  ])('policy refuses %s (%s)', async (newPassword, rule) => {
    const token = await t.login();
    const r = await t.call('POST', '/app/sysLoginUser/updatePassword', { token, body: { oldPassword: ADMIN_PASSWORD, newPassword } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain(rule);
  });

  test('a new password equal to the login name is refused', async () => {
    const u = await plainUser('longname1', []);
    const r = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: u.token, body: { oldPassword: 'Plain-User-Pass-1', newPassword: 'LongName1' } });
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain('login name');
  });

  test('changes the password, ends the other sessions, keeps this one, redacts the op log', async () => {
    const u = await plainUser('mover', []);
    const other = await t.login('mover', 'Plain-User-Pass-1');
    const r = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: u.token, body: { oldPassword: 'Plain-User-Pass-1', newPassword: 'Moved-On-2026!' } });
    expect(r.status).toBe(200);
    expect((await t.call('GET', INFO, { token: u.token })).status).toBe(200);
    expect((await t.call('GET', INFO, { token: other })).status).toBe(401);
    await expect(t.login('mover', 'Plain-User-Pass-1')).rejects.toThrow('401');
    expect(await t.login('mover', 'Moved-On-2026!')).toBeString();
    const op = t.sqlite.query(`SELECT params FROM op_log WHERE trace_id = ?`).get(r.json.traceId) as { params: string };
    expect(JSON.parse(op.params)).toEqual({ oldPassword: '[REDACTED]', newPassword: '[REDACTED]' });
    expect(op.params).not.toContain('Moved-On');
  });

  test('wrong old passwords are throttled like logins: the 6th try is 429, even with the right one', async () => {
    const u = await plainUser('guessed', []);
    for (let i = 0; i < 5; i++) {
      const r = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: u.token, body: { oldPassword: `guess-${i}-pass`, newPassword: 'Brand-New-Pass-9' } });
      expect(r.status).toBe(400);
    }
    const locked = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: u.token, body: { oldPassword: 'Plain-User-Pass-1', newPassword: 'Brand-New-Pass-9' } });
    expect(locked.status).toBe(429);
    expect(Number(locked.res.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(10 * 60_000 + 1000);
    const ok = await t.call('POST', '/app/sysLoginUser/updatePassword', { token: u.token, body: { oldPassword: 'Plain-User-Pass-1', newPassword: 'Brand-New-Pass-9' } });
    expect(ok.status).toBe(200);
  });
});

