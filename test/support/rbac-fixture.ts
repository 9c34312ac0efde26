import type { TestApp } from './app';

export const USER_PASSWORD = 'Plain-Member-77';
let seq = 0;

/**
 * A non-admin user with a fresh role granted the menus carrying `codes`, written straight into the
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
    .query(`INSERT INTO roles (name, code, status, created_at, updated_at) VALUES (?, ?, 'enabled', ?, ?) RETURNING id`)
    .get(`role of ${name}`, `r_${name}`, now, now) as { id: number };
  t.sqlite.query('INSERT INTO user_role (user_id, role_id) VALUES (?, ?)').run(user.id, role.id);
  for (const code of codes) {
    t.sqlite.query('INSERT OR IGNORE INTO role_menu (role_id, menu_id) SELECT ?, id FROM menus WHERE permission = ?').run(role.id, code);
  }
  const token = await t.login(name, USER_PASSWORD);
  return { userId: user.id, roleId: role.id, token, name };
}
