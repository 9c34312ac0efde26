// npm run bench — starts the Bun server and measures, in one run and with one load generator
// (wrk, from Debian: `apt-get install wrk`; installed here when missing and possible):
//   (a) a bare Hono JSON handler in the same process (baseline)
//   (b) a guarded read: token + session + permission check + one small query, as a plain user
//       holding only the route's code (GET /app/sysUser/detail?id=1)
//   (c) GET /app/sysLoginUser/getLoginUserInformation
// and the handwritten peer (bench/peer.ts), and prints requests/s, p50, p99, CPU µs per request and the
// server's peak RSS, plus (b)/(a), (c)/(a), (b)/peer and (c)/(b) (see core() below).
// Also runs bench/scope.ts (data scope: 100k users in ~2,000 orgs, page and guarded read), bench/workerd-rt/run.ts (per operation on workerd: D1 round trips, wall and CPU ms with
// 20 ms injected per D1 call), bench/logs.ts (1M login-log rows, 100k users: page latencies) and bench/files.ts
// (50 MiB upload/download throughput and server RSS) and bench/workerd-upload-heap.ts (Worker isolate memory, 16 parallel uploads).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DURATION = process.env.BENCH_DURATION ?? '10s';
const CONNECTIONS = process.env.BENCH_CONNECTIONS ?? '50';
const PORT = 3900;
const BARE_PORT = 3901;
export const ADMIN_PASSWORD = 'Bench-Admin-Pass-1';

export function ensureWrk() {
  if (spawnSync('wrk', ['--version']).error === undefined) return;
  console.log('wrk not found; trying apt-get install -y wrk');
  spawnSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq wrk'], { stdio: 'inherit' });
  if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is required: apt-get install wrk');
}

export const rssKb = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);

export function toMs(v: string): number {
  const m = v.match(/^([\d.]+)(us|ms|s)$/);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

export async function load(name: string, url: string, pid: number, headers: string[] = []) {
  let peak = rssKb(pid, 'VmRSS');
  const sampler = setInterval(() => (peak = Math.max(peak, rssKb(pid, 'VmRSS'))), 100);
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${DURATION}`, '--latency', ...headers.flatMap((h) => ['-H', h]), url];
  const out = await new Promise<string>((resolve) => {
    const p = spawn('wrk', args);
    let s = '';
    p.stdout.on('data', (d) => (s += d));
    p.on('close', () => resolve(s));
  });
  clearInterval(sampler);
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  const p50 = toMs(out.match(/^\s*50%\s+(\S+)/m)?.[1] ?? '');
  const p99 = toMs(out.match(/^\s*99%\s+(\S+)/m)?.[1] ?? '');
  const non2xx = Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0);
  if (non2xx > 0) throw new Error(`${name}: ${non2xx} non-2xx responses\n${out}`);
  return { name, rps, p50, p99, peakRssMiB: Math.round(peak / 1024) };
}

export async function waitFor(url: string, ms = 15000, headers: Record<string, string> = {}) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch {}
    await Bun.sleep(100);
  }
  throw new Error(`not ready: ${url}`);
}

export async function post(path: string, body: unknown, token?: string, base = `http://127.0.0.1:${PORT}`) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { status: number; data: any; msg: string };
  if (json.status !== 200) throw new Error(`${path}: ${json.status} ${json.msg}`);
  return json.data;
}

export async function startServer(extraEnv: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const env = {
    ...process.env,
    PORT: String(PORT),
    BARE_PORT: String(BARE_PORT),
    HOST: '127.0.0.1',
    DATABASE_PATH: join(dir, 'admin.db'),
    FILES_DIR: join(dir, 'files'),
    ADMIN_PASSWORD,
    CAPTCHA_ENABLED: 'false',
    LOG_REQUESTS: 'false',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const child = spawn(process.execPath, [join(import.meta.dir, 'server.ts')], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  await waitFor(`http://127.0.0.1:${env.PORT}/health`);
  await waitFor(`http://127.0.0.1:${env.BARE_PORT}/bare`);
  return { child, dir, dbPath: env.DATABASE_PATH, stop: () => (child.kill('SIGTERM'), rmSync(dir, { recursive: true, force: true })) };
}

/** A plain user whose one role holds only `code`, made through the API as an SPA would. */
export async function plainUserWith(adminToken: string, code: string, base = `http://127.0.0.1:${PORT}`) {
  const tree = await fetch(`${base}/app/sysMenu/tree`, { headers: { authorization: `Bearer ${adminToken}` } });
  const find = (nodes: any[]): number | undefined => {
    for (const n of nodes) {
      if (n.permission === code) return n.id;
      const hit = find(n.children ?? []);
      if (hit) return hit;
    }
  };
  const menuId = find(((await tree.json()) as any).data);
  if (!menuId) throw new Error(`no menu carries ${code}`);
  const role = await post('/app/sysRole/add', { name: 'Bench', code: 'bench', dataScope: 'all' }, adminToken, base);
  await post('/app/sysRole/grantMenu', { roleId: role.id, menuIds: [menuId] }, adminToken, base);
  await post('/app/sysUser/add', { loginName: 'bench', password: 'Bench-User-Pass-1', roleIds: [role.id] }, adminToken, base);
  return post('/auth/login', { loginName: 'bench', password: 'Bench-User-Pass-1' }, undefined, base).then((d) => d.token as string);
}

/** CPU (user + system) a process has used so far, in µs (/proc/<pid>/stat, USER_HZ = 100). */
export function cpuUs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** load() plus the server's CPU per request over the run (process CPU time / requests). */
async function loadCpu(name: string, url: string, pid: number, headers: string[] = []) {
  const before = cpuUs(pid);
  const r = await load(name, url, pid, headers);
  const seconds = Number(DURATION.replace(/s$/, ''));
  return { ...r, cpuUsPerReq: Math.round((cpuUs(pid) - before) / (r.rps * seconds)) };
}

/**
 * A second server for the same run: another checkout's bench/server.ts (BENCH_BASELINE=<dir>, e.g. a
 * worktree of an earlier commit) on its own ports and database, so before and after are measured
 * side by side on one machine in one run.
 */
async function startAt(root: string, port: number, barePort: number, secret: string) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  const env = {
    ...process.env,
    PORT: String(port),
    BARE_PORT: String(barePort),
    HOST: '127.0.0.1',
    DATABASE_PATH: join(dir, 'admin.db'),
    FILES_DIR: join(dir, 'files'),
    JWT_SECRET: secret,
    ADMIN_PASSWORD,
    CAPTCHA_ENABLED: 'false',
    LOG_REQUESTS: 'false',
    LOG_LEVEL: 'warn',
  };
  const child = spawn(process.execPath, [join(root, 'bench/server.ts')], { env, stdio: ['ignore', 'inherit', 'inherit'], cwd: root });
  await waitFor(`http://127.0.0.1:${port}/health`);
  await waitFor(`http://127.0.0.1:${barePort}/bare`);
  return { child, dir, dbPath: env.DATABASE_PATH, stop: () => (child.kill('SIGTERM'), rmSync(dir, { recursive: true, force: true })) };
}

/** The guarded-read and user-information cases against one server: its tokens and URLs. */
async function casesOf(base: string, label: string) {
  const guardedPath = process.env.BENCH_GUARDED_PATH ?? '/app/sysUser/detail?id=1';
  const guardedCode = process.env.BENCH_GUARDED_CODE ?? 'sys:user:detail';
  const adminToken = (await post('/auth/login', { loginName: 'admin', password: ADMIN_PASSWORD }, undefined, base)).token as string;
  const userToken = await plainUserWith(adminToken, guardedCode, base);
  const check = await fetch(`${base}${guardedPath}`, { headers: { authorization: `Bearer ${userToken}` } });
  if (check.status !== 200) throw new Error(`guarded route ${guardedPath} answered ${check.status}`);
  return {
    b: { name: `(b${label}) guarded read ${guardedPath}`, url: `${base}${guardedPath}`, headers: [`Authorization: Bearer ${userToken}`] },
    c: { name: `(c${label}) getLoginUserInformation`, url: `${base}/app/sysLoginUser/getLoginUserInformation`, headers: [`Authorization: Bearer ${adminToken}`] },
    userToken,
  };
}

/**
 * `npm run bench -- core`: in one run, (a) the bare Hono handler, (b) the guarded read, (c)
 * getLoginUserInformation, and the handwritten peer (bench/peer.ts: JWT verify + one prepared
 * SELECT) on the same database, each BENCH_ROUNDS times (2) interleaved; per case req/s, p50/p99,
 * the server's CPU per request, and the ratios. BENCH_BASELINE=<checkout> adds (b0)/(c0) from that
 * checkout's server in the same rounds.
 */
async function core() {
  ensureWrk();
  const secret = crypto.randomUUID() + crypto.randomUUID();
  const server = await startAt(join(import.meta.dir, '..'), PORT, BARE_PORT, secret);
  const baselineDir = process.env.BENCH_BASELINE;
  const baseline = baselineDir ? await startAt(baselineDir, PORT + 10, BARE_PORT + 10, secret) : undefined;
  const peerPort = PORT + 2;
  const peer = spawn(process.execPath, [join(import.meta.dir, 'peer.ts')], {
    env: { ...process.env, PEER_PORT: String(peerPort), DATABASE_PATH: server.dbPath, JWT_SECRET: secret },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    const pid = server.child.pid!;
    const now = await casesOf(`http://127.0.0.1:${PORT}`, '');
    const before = baseline ? await casesOf(`http://127.0.0.1:${PORT + 10}`, '0') : undefined;
    const peerUrl = `http://127.0.0.1:${peerPort}/user?id=1`;
    await waitFor(peerUrl, 15000, { authorization: `Bearer ${now.userToken}` });
    // Warm up JIT and statement caches.
    await load('warmup', `http://127.0.0.1:${BARE_PORT}/bare`, pid);
    const rows: Awaited<ReturnType<typeof loadCpu>>[] = [];
    const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
    for (let round = 0; round < rounds; round++) {
      rows.push(await loadCpu('(a) bare Hono JSON', `http://127.0.0.1:${BARE_PORT}/bare`, pid));
      rows.push(await loadCpu(now.b.name, now.b.url, pid, now.b.headers));
      if (before) rows.push(await loadCpu(before.b.name, before.b.url, baseline!.child.pid!, before.b.headers));
      rows.push(await loadCpu('(peer) Bun + jose + one SELECT', peerUrl, peer.pid!, [`Authorization: Bearer ${now.userToken}`]));
      rows.push(await loadCpu(now.c.name, now.c.url, pid, now.c.headers));
      if (before) rows.push(await loadCpu(before.c.name, before.c.url, baseline!.child.pid!, before.c.headers));
    }
    console.log(`\nwrk -t1 -c${CONNECTIONS} -d${DURATION}, ${rounds} round(s); server peak RSS (VmHWM) ${Math.round(rssKb(pid, 'VmHWM') / 1024)} MiB`);
    console.table(rows);
    const best = (prefix: string) => Math.max(...rows.filter((r) => r.name.startsWith(prefix)).map((r) => r.rps));
    const cpu = (prefix: string) => Math.min(...rows.filter((r) => r.name.startsWith(prefix)).map((r) => r.cpuUsPerReq));
    const [a, b, c, p] = [best('(a)'), best('(b)'), best('(c)'), best('(peer)')];
    const ratio = (x: number, y: number) => (x / y).toFixed(3);
    console.log(`best of rounds: (b)/(a) = ${ratio(b, a)}   (c)/(a) = ${ratio(c, a)}   (b)/peer = ${ratio(b, p)}   (c)/(b) = ${ratio(c, b)}`);
    console.log(`CPU µs per request (lowest round): (a) ${cpu('(a)')}  (b) ${cpu('(b)')}  (c) ${cpu('(c)')}  peer ${cpu('(peer)')}`);
    if (before) {
      const [b0, c0] = [best('(b0)'), best('(c0)')];
      console.log(`against BENCH_BASELINE (${baselineDir}): (b)/(b0) = ${ratio(b, b0)}   (c)/(c0) = ${ratio(c, c0)}   CPU µs (b0) ${cpu('(b0)')}  (c0) ${cpu('(c0)')}`);
    }
  } finally {
    peer.kill('SIGTERM');
    server.stop();
    baseline?.stop();
  }
}

if (import.meta.main) {
  // `npm run bench` runs every suite; `npm run bench -- core|logs|files|runtimes|workerd|upload-heap|locking|soak|quickcheck|export` runs one.
  const only = process.argv[2];
  if (only === 'runtimes') await (await import('./runtimes.ts')).run();
  if (!only || only === 'core') await core();
  if (!only || only === 'logs') await (await import('./logs.ts')).run();
  if (!only || only === 'scope') await (await import('./scope.ts')).run();
  if (!only || only === 'locking') await (await import('./locking.ts')).run();
  // Not part of the default run: it takes SOAK_MINUTES (60).
  if (only === 'soak') await (await import('./soak.ts')).run();
  // Not part of the default run either: it builds a 1 GB database first (QC_TARGET_MB).
  if (only === 'quickcheck') await (await import('./quickcheck.ts')).run();
  if (only === 'export') {
    // Not part of the default run: the 1M-row exports take minutes (bench/export.ts; ROWS, BIG).
    const r = spawnSync(process.execPath, [join(import.meta.dir, 'export.ts')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('export bench failed');
  }
  // The users export end to end (100k users: time and peak RSS, super admin and a scoped admin).
  if (only === 'export-users') await (await import('./export-users.ts')).run();
  if (only === 'export-heap') await (await import('./workerd-export-heap.ts')).run();
  if (!only || only === 'files') {
    const r = spawnSync(process.execPath, [join(import.meta.dir, 'files.ts')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('files bench failed');
  }
  if (!only || only === 'upload-heap') {
    // The Worker isolate's memory with 16 parallel 7 MiB uploads, with and without Content-Length (about a minute).
    const r = spawnSync(process.execPath, [join(import.meta.dir, 'workerd-upload-heap.ts')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('workerd upload heap bench failed');
  }
  if (!only || only === 'workerd') {
    // D1 round trips, wall and CPU per operation on workerd with DB_DELAY_MS (20) per D1 call.
    const r = spawnSync(process.execPath, [join(import.meta.dir, 'workerd-rt/run.ts')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('workerd round-trip bench failed');
  }
  process.exit(0);
}
