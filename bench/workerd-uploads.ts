// bun bench/workerd-uploads.ts [project-dir] — memory of parallel uploads on workerd.
// Starts `wrangler dev --local` (local D1 and R2), logs in, then sends PARALLEL uploads of SIZE_MIB
// each at once to /app/sysFile/upload, and samples meanwhile (every 20 ms) the resident memory of
// all workerd processes: an upper bound of the isolate's memory (it includes workerd itself and
// the local R2/D1 simulators, which run in the same process). (wrangler's inspector proxy did not
// answer Runtime.getHeapUsage here, so the isolate heap is not read directly.)
// An optional project dir measures another checkout (e.g. the commit before a change).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/e2e/servers.ts';
import { rssMiB, stopGroup, workerdUnder } from './proc.ts';

const ROOT = resolve(process.argv[2] ?? join(import.meta.dir, '..'));
const PARALLEL = Number(process.env.PARALLEL ?? 16);
const SIZE = Number(process.env.SIZE_MIB ?? 7) * 1024 * 1024;
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', CI: 'true' };
const dir = mkdtempSync(join(tmpdir(), 'edge-uploads-'));
const envFile = join(dir, 'empty.env');
writeFileSync(envFile, '');
const MiB = 1024 * 1024;

const port = await freePort();
const inspectPort = await freePort();
const child = spawn(
  'node',
  [WRANGLER, 'dev', '--local', '--persist-to', dir, '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspectPort), '--show-interactive-dev-session=false', '--env-file', envFile,
    '--var', 'JWT_SECRET:upload-bench-secret-upload-bench-secret-01', '--var', 'ADMIN_PASSWORD:Upload-Bench-Pass-42', '--var', 'CAPTCHA_ENABLED:false', '--var', 'LOG_REQUESTS:false'],
  { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
);
let out = '';
child.stdout!.on('data', (b) => (out += b));
child.stderr!.on('data', (b) => (out += b));
try {
  const r = spawnSync('node', [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', dir], { cwd: ROOT, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (i > 400 || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${out}`);
    if (await fetch(`${base}/health`).then((res) => res.ok, () => false)) break;
    await Bun.sleep(150);
  }
  const login = await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: 'Upload-Bench-Pass-42' }) })).json();
  const token = (login as { data: { token: string } }).data.token;
  const body = (i: number) => {
    const data = new Uint8Array(SIZE);
    crypto.getRandomValues(data.subarray(0, 65536));
    data[0] = i; // distinct contents: no deduplication
    const form = new FormData();
    form.append('file', new Blob([data], { type: 'application/octet-stream' }), `big-${i}.bin`);
    return form;
  };
  // One warm-up upload, then a collected heap as the baseline.
  await (await fetch(`${base}/app/sysFile/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: body(255) })).text();
  await Bun.sleep(2000);
  const pids = workerdUnder(child.pid!);
  const workerdRssMiB = () => rssMiB(pids);
  const rss0 = workerdRssMiB();
  let peakRss = rss0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, workerdRssMiB());
      await Bun.sleep(20);
    }
  })();
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) =>
      fetch(`${base}/app/sysFile/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: body(i) }).then((res) => res.status),
    ),
  );
  const ms = performance.now() - started;
  sampling = false;
  await sampler;
  console.log(`${PARALLEL} parallel uploads of ${SIZE / MiB} MiB: statuses ${[...new Set(statuses)].join(',')} in ${ms.toFixed(0)} ms`);
  console.log(`  workerd processes RSS (${pids.length} of this wrangler): baseline ${rss0.toFixed(0)} MiB, peak ${peakRss.toFixed(0)} MiB (+${(peakRss - rss0).toFixed(0)})`);
} finally {
  await stopGroup(child);
  rmSync(dir, { recursive: true, force: true });
}
