import type { TestApp } from './app';

export const USER_PASSWORD = 'Plain-Member-77';
let seq = 0;

/**
 * A non-admin user with a fresh role (data scope `all`) granted the menus carrying `codes`, written straight into the
 * database (the users/roles API is tested elsewhere). Returns the ids and a logged-in token.
 */
export async function userWithCodes(t: TestApp, codes: readonly string[], name = `member${++seq}`) {
  const now = new Date(t.clock.now()).toISOString();
  const hash = await t.deps.hasher.hash(USER_PASSWORD);
  const user = t.sqlite
    .query(`INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at)
            VALUES (?, ?, ?, 'enabled', ?, ?) RETURNING id`)
    .get(name, hash, name, now, now) as { id: number };
  const role = t.sqlite
    .query(`INSERT INTO roles (name, code, status, data_scope, created_at, updated_at) VALUES (?, ?, 'enabled', 'all', ?, ?) RETURNING id`)
    .get(`role of ${name}`, `r_${name}`, now, now) as { id: number };
  t.sqlite.query('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)').run(user.id, role.id);
  for (const code of codes) {
    t.sqlite.query('INSERT OR IGNORE INTO role_menu (role_id, menu_id) SELECT ?, id FROM menus WHERE permission = ?').run(role.id, code);
  }
  const token = await t.login(name, USER_PASSWORD);
  return { userId: user.id, roleId: role.id, token, name };
}

/** A body for a page request or batch action, and the request forms every test file tries. */
export const BAD_IDS: [string, unknown][] = [
  ['a string', ['1']],
  ['an injection string', '1 OR 1=1'],
  ['an injection string inside', ['1 OR 1=1']],
  ['a negative id', [-1]],
  ['zero', [0]],
  ['a fraction', [1.5]],
  ['an unsafe integer', [2 ** 53]],
  ['a nested array', [[1]]],
  ['an object', { id: 1 }],
  ['an empty array', []],
  ['101 ids', Array.from({ length: 101 }, (_, i) => i + 1)],
  ['null', null],
];

/** Bodies every `page` action must refuse with 400. */
export const BAD_PAGE_REQUESTS: [string, unknown][] = [
  ['pageSize 0', { pageSize: 0 }],
  ['pageSize 101', { pageSize: 101 }],
  ['pageNo 0', { pageNo: 0 }],
  ['pageNo as a string', { pageNo: '1' }],
  ['a fractional pageSize', { pageSize: 2.5 }],
  ['an unknown top-level field', { pageNo: 1, where: '1=1' }],
  ['an unknown param', { params: { nope: 'x' } }],
  ['params as an array', { params: [] }],
  ['an injection in sortField', { sortField: 'id; DROP TABLE users' }],
  ['a column outside the whitelist in sortField', { sortField: 'password_hash' }],
  ['a bad sortOrder', { sortOrder: 'sideways' }],
  ['searchCount as a string', { searchCount: 'false' }],
];
