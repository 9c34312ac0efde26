// bun bench/workerd-cold.ts [project-dir] — the first request of a fresh workerd isolate.
// Starts `wrangler dev --local` RUNS times over one local D1 database (the administrator already
// exists, as in production after the first start), and for each fresh isolate times the first
// request and a second one from outside (wall) and reads the CPU the workerd processes used
// meanwhile from /proc (this wrangler's workerd only; an upper bound of the isolate's CPU: it
// includes workerd's own work and the local D1).
// An optional project dir measures another checkout (e.g. the commit before a change).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/e2e/servers.ts';
import { cpuMs, stopGroup, workerdUnder } from './proc.ts';

const ROOT = resolve(process.argv[2] ?? join(import.meta.dir, '..'));
const RUNS = Number(process.env.RUNS ?? 4);
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', CI: 'true' };
const dir = mkdtempSync(join(tmpdir(), 'edge-cold-'));
const envFile = join(dir, 'empty.env');
writeFileSync(envFile, '');
async function once(first: string, init?: RequestInit) {
  const port = await freePort();
  const inspector = await freePort();
  const child = spawn(
    'node',
    [WRANGLER, 'dev', '--local', '--persist-to', dir, '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--show-interactive-dev-session=false', '--env-file', envFile,
      '--var', 'JWT_SECRET:cold-start-secret-cold-start-secret-0123', '--var', 'ADMIN_PASSWORD:Cold-Start-Pass-42', '--var', 'CAPTCHA_ENABLED:false', '--var', 'LOG_REQUESTS:false'],
    { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  try {
    const deadline = Date.now() + 60_000;
    while (!/Ready on http/.test(out)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${out}`);
      await Bun.sleep(100);
    }
    await Bun.sleep(1500); // let start-up CPU settle
    const pids = workerdUnder(child.pid!);
    const workerdCpuMs = () => cpuMs(pids);
    const cpu0 = workerdCpuMs();
    let t = performance.now();
    const r1 = await fetch(`http://127.0.0.1:${port}${first}`, init);
    await r1.text();
    const wall1 = performance.now() - t;
    await Bun.sleep(300);
    const cpu1 = workerdCpuMs();
    t = performance.now();
    await (await fetch(`http://127.0.0.1:${port}${first}`, init)).text();
    const wall2 = performance.now() - t;
    await Bun.sleep(300);
    const cpu2 = workerdCpuMs();
    return { status: r1.status, wall1, cpu1: cpu1 - cpu0, wall2, cpu2: cpu2 - cpu1 };
  } finally {
    await stopGroup(child);
  }
}

try {
  const r = spawnSync('node', [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', dir], { cwd: ROOT, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  await once('/health'); // creates the administrator (one hash), like a first deployment
  const login = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: 'Cold-Start-Pass-42' }) };
  for (const [name, path, init] of [['GET /health', '/health', undefined], ['POST /auth/login', '/auth/login', login]] as const) {
    for (let i = 0; i < RUNS; i++) {
      const m = await once(path, init);
      console.log(
        `${name.padEnd(17)} fresh isolate: ${m.status} wall ${m.wall1.toFixed(0).padStart(4)} ms, workerd CPU ${m.cpu1.toFixed(0).padStart(4)} ms | second request: wall ${m.wall2.toFixed(0).padStart(4)} ms, CPU ${m.cpu2.toFixed(0).padStart(4)} ms`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
