/**
 * What data scope costs: 100k users in a 5-level tree of ~2,000 organisations, measured through
 * app.request() in one process (router, auth, validation, SQL and JSON included; no socket).
 *   - sysUser/page p50/p99 for a caller with scope `all` vs `orgAndBelow` (a level-2 branch, ~1/8
 *     of the users; and a level-3 department), same codes, same run (goal: within 1.5x, < 20 ms);
 *   - a guarded read (sysUser/detail of a user in scope) for `all` vs `orgAndBelow` vs a super admin
 *     (the same read with no scope condition): the extra
 *     cost of the scope (goal: < 10%).
 * `bun bench/scope.ts [users=100000] [iterations=2000] (a p99 over 300 requests is the 3rd-worst one: too noisy for a ratio)`; `npm run bench scope` runs it too.
 */
import { makeTestApp, type TestApp } from '../test/support/app.ts';
import { seedUsers } from './seed-logs.ts';

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
/** Children per node at each level below the root: 1 → 8 → 48 → 336 → 1,680 (2,073 organisations). */
const FANOUT = [8, 6, 7, 5];

/** A 5-level tree with its closure rows; returns the org ids by level. */
function seedOrgs(t: TestApp): number[][] {
  const now = new Date(t.clock.now()).toISOString();
  const insert = t.sqlite.prepare('INSERT INTO orgs (parent_id, name, code, sort, status, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?, ?) RETURNING id');
  const closure = t.sqlite.prepare(
    'INSERT INTO org_closure (ancestor_id, descendant_id, depth) SELECT ancestor_id, ?, depth + 1 FROM org_closure WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0',
  );
  const levels: number[][] = [];
  t.sqlite.transaction(() => {
    const add = (parent: number, code: string) => {
      const { id } = insert.get(parent, code, code, 'enabled', now, now) as { id: number };
      closure.run(id, parent, id, id);
      return id;
    };
    levels.push([add(0, 'L0')]);
    for (const [depth, fan] of FANOUT.entries()) {
      const next: number[] = [];
      for (const parent of levels[depth]!) for (let i = 0; i < fan; i++) next.push(add(parent, `L${depth + 1}-${parent}-${i}`));
      levels.push(next);
    }
  })();
  return levels;
}

/** Puts every user in an organisation: 90% in the leaves, the rest spread over the upper levels. */
function placeUsers(t: TestApp, levels: number[][]) {
  const leaves = levels.at(-1)!;
  const upper = levels.slice(0, -1).flat();
  const update = t.sqlite.prepare('UPDATE users SET org_id = ? WHERE id = ?');
  const ids = (t.sqlite.query('SELECT id FROM users').all() as { id: number }[]).map((r) => r.id);
  t.sqlite.transaction(() => {
    for (const [i, id] of ids.entries()) update.run(i % 10 === 0 ? upper[i % upper.length]! : leaves[(i * 7919) % leaves.length]!, id);
  })();
}

async function caller(t: TestApp, admin: string, name: string, dataScope: string, orgId: number) {
  const post = async (path: string, body: unknown) => {
    const r = await t.call('POST', path, { token: admin, body });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.json.msg}`);
    return r.data;
  };
  const menus = (t.sqlite.query(`SELECT id FROM menus WHERE permission IN ('sys:user:page', 'sys:user:detail')`).all() as { id: number }[]).map((r) => r.id);
  const role = await post('/app/sysRole/add', { name, code: name, dataScope });
  await post('/app/sysRole/grantMenu', { roleId: role.id, menuIds: menus });
  await post('/app/sysUser/add', { loginName: name, password: 'Bench-Scope-Pass-1', orgId, roleIds: [role.id] });
  return t.login(name, 'Bench-Scope-Pass-1');
}

interface Scenario {
  label: string;
  token: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
}

async function once(t: TestApp, { token, method, path, body }: Scenario) {
  const started = performance.now();
  const res = await t.app.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as { status: number; msg: string; data: any };
  const ms = performance.now() - started;
  if (json.status !== 200) throw new Error(`${path}: ${json.status} ${json.msg}`);
  return { ms, total: (json.data?.total as number | undefined) ?? 1 };
}

/**
 * Runs the scenarios interleaved, one request each per iteration in a rotating order, so that
 * drift on a shared machine (GC, other processes) hits every scenario alike and ratios taken from
 * one call compare like with like. `trimmed` is the mean without the slowest 5%.
 */
async function measure(t: TestApp, scenarios: Scenario[], iterations: number) {
  for (let i = 0; i < 30; i++) for (const s of scenarios) await once(t, s); // warm-up: statement caches, JIT
  const times = scenarios.map(() => [] as number[]);
  const totals = scenarios.map(() => 0);
  for (let i = 0; i < iterations; i++) {
    for (let k = 0; k < scenarios.length; k++) {
      const j = (i + k) % scenarios.length;
      const r = await once(t, scenarios[j]!);
      times[j]!.push(r.ms);
      totals[j] = r.total;
    }
  }
  return scenarios.map((s, j) => {
    const sorted = [...times[j]!].sort((a, b) => a - b);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const r3 = (x: number) => +x.toFixed(3);
    return {
      scenario: s.label,
      p50: r3(pct(sorted, 50)),
      p99: r3(pct(sorted, 99)),
      mean: r3(mean(sorted)),
      trimmed: r3(mean(sorted.slice(0, Math.ceil(sorted.length * 0.95)))),
      total: totals[j]!,
    };
  });
}

/** The seeded app, its callers (`all`, `orgAndBelow` of a branch and of a department) and a user all of them see. */
export async function setup(users = 100_000) {
  const t = await makeTestApp();
  const levels = seedOrgs(t);
  const seeded = seedUsers(t.sqlite, users, { endMs: t.clock.now() });
  placeUsers(t, levels);
  t.sqlite.run('ANALYZE');
  console.log(`\nseeded ${levels.flat().length} organisations (${levels.map((l) => l.length).join(' / ')} per level) and ${users} users in ${seeded.toFixed(0)} ms`);
  const admin = await t.login();
  const branch = levels[1]![3]!;
  // A level-3 department inside that branch.
  const department = (t.sqlite.query('SELECT id FROM orgs WHERE parent_id = ? ORDER BY id LIMIT 1').get(branch) as { id: number }).id;
  const tokens = {
    all: await caller(t, admin, 'benchAll', 'all', branch),
    branch: await caller(t, admin, 'benchBranch', 'orgAndBelow', branch),
    department: await caller(t, admin, 'benchDept', 'orgAndBelow', department),
  };
  // A user both callers see (in the department, hence in the branch too).
  const target = (t.sqlite.query('SELECT u.id FROM users u JOIN org_closure c ON c.descendant_id = u.org_id WHERE c.ancestor_id = ? LIMIT 1').get(department) as { id: number }).id;
  return { t, admin, tokens, target };
}

export async function run(users = 100_000, iterations = 2000) {
  const { t, admin, tokens, target } = await setup(users);

  const page = (label: string, token: string, body: unknown = {}): Scenario => ({ label, token, method: 'POST', path: '/app/sysUser/page', body });
  const detail = (label: string, token: string): Scenario => ({ label, token, method: 'GET', path: `/app/sysUser/detail?id=${target}` });
  const [pageAll, pageBranch, pageDept, pageBranchDeep, pageAllDeep] = await measure(
    t,
    [
      page('sysUser/page, scope all', tokens.all),
      page('sysUser/page, orgAndBelow (level-2 branch)', tokens.branch),
      page('sysUser/page, orgAndBelow (level-3 department)', tokens.department),
      page('sysUser/page 50, orgAndBelow (branch)', tokens.branch, { pageNo: 50 }),
      page('sysUser/page 50, scope all', tokens.all, { pageNo: 50 }),
    ],
    iterations,
  );
  // A guarded read costs ~0.1 ms: many more requests, so that the few µs the scope adds show.
  const [detailAll, detailBranch, detailNoScope] = await measure(
    t,
    [
      detail('sysUser/detail, scope all', tokens.all),
      detail('sysUser/detail, orgAndBelow (branch)', tokens.branch),
      // The same read with no scope condition at all (a super admin reads through findUser).
      detail('sysUser/detail, super admin (no scope condition)', admin),
    ],
    iterations * 10,
  );
  console.log(`\ndata scope cost through app.request(), interleaved; ${iterations} requests per page scenario, ${iterations * 10} per detail (ms)`);
  console.table([pageAll, pageBranch, pageDept, pageBranchDeep, pageAllDeep, detailAll, detailBranch, detailNoScope]);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  console.log(
    `page p99 orgAndBelow(branch)/all = ${ratio(pageBranch!.p99, pageAll!.p99)}, orgAndBelow(department)/all = ${ratio(pageDept!.p99, pageAll!.p99)} (goal ≤ 1.5x, both < 20 ms); ` +
      `p50 ${ratio(pageBranch!.p50, pageAll!.p50)}, ${ratio(pageDept!.p50, pageAll!.p50)}`,
  );
  const extra = (scoped: number, base: number) => `${(((scoped - base) / base) * 100).toFixed(1)}%`;
  console.log(
    `guarded read (detail), what the scope adds: orgAndBelow vs all ${extra(detailBranch!.p50, detailAll!.p50)} (p50), ${extra(detailBranch!.trimmed, detailAll!.trimmed)} (trimmed mean); ` +
      `orgAndBelow vs no scope condition ${extra(detailBranch!.p50, detailNoScope!.p50)} (p50), ${extra(detailBranch!.trimmed, detailNoScope!.trimmed)} (trimmed mean) (goal < 10%)`,
  );
}

if (import.meta.main) {
  const [users, iterations] = process.argv.slice(2).map(Number);
  await run(users, iterations);
  process.exit(0);
}
