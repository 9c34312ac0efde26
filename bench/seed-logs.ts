import type { Database } from 'bun:sqlite';

/**
 * Bulk seeding for the page benchmarks: one prepared INSERT per table inside one transaction, so a
 * million rows take seconds. Deterministic (a small LCG), so runs compare.
 */

const YEAR_MS = 365 * 86_400_000;
/** A syntactically valid argon2id PHC string nobody knows the password of; seeded users cannot log in. */
const DUMMY_HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWRzZWVkc2VlZA$3HhOX1tYkE2mbBSBxw0k2rjkQ7bRvY0yq9Yf4bVJwXw';

const USER_AGENTS = [
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'Chrome 131', 'Windows 10/11'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', 'Safari 18', 'macOS 10.15'],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0', 'Firefox 132', 'Linux'],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 'Safari 18', 'iOS 18'],
  ['curl/8.5.0', 'curl 8', 'Unknown'],
] as const;

const FAILURES = ['Invalid login name or password', 'securityCode: the verification code is wrong or has expired', 'Account is disabled'];

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `user000042`: the login names seedUsers creates (and seedLoginLogs mostly uses). */
export const seededLoginName = (i: number) => `user${String(i).padStart(6, '0')}`;

export interface SeedLoginLogOptions {
  /** Distinct login names the rows are spread over (default 100,000); ~3% of rows use unknown names. */
  names?: number;
  /** Newest created_at (default now); rows spread evenly over the year before it, oldest first. */
  endMs?: number;
  seed?: number;
}

/** Inserts `n` login_log rows; returns the time taken in ms. */
export function seedLoginLogs(sqlite: Database, n: number, opts: SeedLoginLogOptions = {}): number {
  const started = performance.now();
  const names = opts.names ?? 100_000;
  const end = opts.endMs ?? Date.now();
  const start = end - YEAR_MS;
  const rnd = lcg(opts.seed ?? 42);
  const insert = sqlite.prepare(
    `INSERT INTO login_log (login_name, user_id, status, msg, ip, user_agent, browser, os, country, city, trace_id, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const r = rnd();
      const unknown = r < 0.03;
      const userNo = 1 + Math.floor(rnd() * names);
      const loginName = unknown ? `ghost${Math.floor(rnd() * 1000)}` : seededLoginName(userNo);
      const failed = unknown || rnd() < 0.12;
      const [ua, browser, os] = USER_AGENTS[Math.floor(rnd() * USER_AGENTS.length)]!;
      const ip = `10.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${1 + Math.floor(rnd() * 254)}`;
      const at = new Date(start + Math.floor(((i + rnd()) * YEAR_MS) / n)).toISOString();
      const trace = (i.toString(16) + '0'.repeat(32)).slice(0, 32);
      insert.run(
        loginName,
        unknown ? null : userNo,
        failed ? 'failure' : 'success',
        failed ? FAILURES[Math.floor(rnd() * FAILURES.length)]! : 'Login succeeded',
        ip, ua, browser, os, null, null, trace, at,
      );
    }
  })();
  return performance.now() - started;
}

/** Inserts `m` users named seededLoginName(1..m) that cannot log in; returns the time taken in ms. */
export function seedUsers(sqlite: Database, m: number, opts: { endMs?: number; seed?: number } = {}): number {
  const started = performance.now();
  const end = opts.endMs ?? Date.now();
  const rnd = lcg(opts.seed ?? 7);
  const insert = sqlite.prepare(
    `INSERT INTO users (login_name, password_hash, nick_name, email, phone, status, remark, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 1; i <= m; i++) {
      const name = seededLoginName(i);
      const at = new Date(end - YEAR_MS + Math.floor(((i - 1 + rnd()) * YEAR_MS) / m)).toISOString();
      insert.run(
        name, DUMMY_HASH, `Member ${i}`, `${name}@example.com`,
        `+1555${String(Math.floor(rnd() * 10_000_000)).padStart(7, '0')}`,
        rnd() < 0.05 ? 'disabled' : 'enabled', at, at,
      );
    }
  })();
  return performance.now() - started;
}

const OP_MODULES = ['sysUser', 'sysRole', 'sysMenu', 'sysFile', 'sysImage', 'sysLoginLog', 'sysOpLog', 'sysOnlineUser', 'sysBackup', 'sysLoginUser'];
const OP_ACTIONS = ['add', 'edit', 'delete', 'changeStatus', 'resetPassword', 'grantRole', 'upload', 'clear', 'forceLogout', 'updateInfo'];

/** Inserts `n` op_log rows over `operators` seeded users, spread over the year before `endMs`; returns ms. */
export function seedOpLogs(sqlite: Database, n: number, opts: { operators?: number; endMs?: number; seed?: number } = {}): number {
  const started = performance.now();
  const operators = opts.operators ?? 1000;
  const end = opts.endMs ?? Date.now();
  const start = end - YEAR_MS;
  const rnd = lcg(opts.seed ?? 99);
  const insert = sqlite.prepare(
    `INSERT INTO op_log (module, action, method, path, operator_id, operator_name, ip, user_agent, params, status, error_msg, duration_ms, trace_id, created_at)
     VALUES (?, ?, 'POST', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const module = OP_MODULES[Math.floor(rnd() * OP_MODULES.length)]!;
      const action = OP_ACTIONS[Math.floor(rnd() * OP_ACTIONS.length)]!;
      const op = 1 + Math.floor(rnd() * operators);
      const r = rnd();
      const status = r < 0.9 ? 200 : r < 0.95 ? 400 : r < 0.98 ? 403 : 409;
      const at = new Date(start + Math.floor(((i + rnd()) * YEAR_MS) / n)).toISOString();
      insert.run(
        module, action, `/app/${module}/${action}`, op, seededLoginName(op),
        `10.${Math.floor(rnd() * 256)}.${Math.floor(rnd() * 256)}.${1 + Math.floor(rnd() * 254)}`,
        USER_AGENTS[Math.floor(rnd() * USER_AGENTS.length)]![0], '{"id":1}', status,
        status === 200 ? null : 'Request parameter error', Math.floor(rnd() * 200),
        (i.toString(16) + '0'.repeat(32)).slice(0, 32), at,
      );
    }
  })();
  return performance.now() - started;
}

/**
 * Inserts `n` file records (kind 'file', one blob each, names, extensions and content types spread
 * like an office share) plus a role granted to every 10th user and an organisation holding every
 * 7th, so the files page and the users page's roleId/orgId filters have something to find.
 * Generated inside SQLite. Returns the time taken in ms.
 */
export function seedFilesAndGrants(sqlite: Database, n: number, opts: { users?: number; endMs?: number } = {}): number {
  const started = performance.now();
  const end = Math.floor((opts.endMs ?? Date.now()) / 1000);
  const users = opts.users ?? 100_000;
  sqlite.transaction(() => {
    sqlite.run(`INSERT INTO blobs (sha256, size, ref_count, created_at)
      WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
      SELECT printf('%064x', i), 1000 + (i * 7919) % 5000000, 1, strftime('%Y-%m-%dT%H:%M:%fZ', ${end} - 31536000 + i * (31536000 / ${n}), 'unixepoch') FROM k`);
    sqlite.run(`INSERT INTO files (kind, name, extension, content_type, size, sha256, created_by, created_at)
      WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
      SELECT 'file', printf('%s-%d.%s', CASE i % 4 WHEN 0 THEN 'report' WHEN 1 THEN 'invoice' WHEN 2 THEN 'scan' ELSE 'notes' END, i,
               CASE i % 5 WHEN 0 THEN 'pdf' WHEN 1 THEN 'docx' WHEN 2 THEN 'xlsx' WHEN 3 THEN 'txt' ELSE 'zip' END),
             CASE i % 5 WHEN 0 THEN 'pdf' WHEN 1 THEN 'docx' WHEN 2 THEN 'xlsx' WHEN 3 THEN 'txt' ELSE 'zip' END,
             CASE i % 5 WHEN 0 THEN 'application/pdf' WHEN 1 THEN 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
               WHEN 2 THEN 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' WHEN 3 THEN 'text/plain' ELSE 'application/zip' END,
             1000 + (i * 7919) % 5000000, printf('%064x', i), 1 + i % ${users},
             strftime('%Y-%m-%dT%H:%M:%fZ', ${end} - 31536000 + i * (31536000 / ${n}), 'unixepoch') FROM k`);
    sqlite.run(`INSERT INTO roles (name, code, sort, status, data_scope, created_at, updated_at) VALUES ('Bench readers', 'bench_readers', 0, 'enabled', 'all', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
    sqlite.run(`INSERT INTO user_role (user_id, role_id) SELECT id, (SELECT id FROM roles WHERE code = 'bench_readers') FROM users WHERE id % 10 = 0`);
    sqlite.run(`INSERT INTO orgs (name, code, created_at, updated_at) VALUES ('Bench branch', 'bench_branch', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`);
    sqlite.run(`INSERT INTO org_closure (ancestor_id, descendant_id, depth) SELECT id, id, 0 FROM orgs WHERE code = 'bench_branch'`);
    sqlite.run(`UPDATE users SET org_id = (SELECT id FROM orgs WHERE code = 'bench_branch') WHERE id % 7 = 0`);
  })();
  return performance.now() - started;
}
