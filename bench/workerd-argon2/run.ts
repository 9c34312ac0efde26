// bun bench/workerd-argon2/run.ts — starts the bench Worker under `wrangler dev --local`, then
// times sequential requests from outside: /noop (baseline), /hash and /verify (argon2id,
// m=19456 t=2 p=1 in WebAssembly). Wall time of a pure-CPU request on an idle local workerd is
// its CPU time, which is what the Workers CPU limit counts. Prints medians and p90.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../../test/e2e/servers.ts';

const ROOT = join(import.meta.dir, '../..');
const N = Number(process.env.N ?? 15);
const [port, inspector] = [await freePort(), await freePort()];
const child = spawn(
  'node',
  [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'dev', '--local', '-c', join(import.meta.dir, 'wrangler.toml'), '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector)],
  { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' }, stdio: 'ignore', detached: true },
);
const base = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; ; i++) {
    if (i > 200) throw new Error('bench worker did not start');
    if (await fetch(`${base}/noop`).then((r) => r.ok, () => false)) break;
    await Bun.sleep(150);
  }
  const time = async (path: string) => {
    await fetch(base + path).then((r) => r.text()); // warm-up
    const ms: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await fetch(base + path).then((r) => r.text());
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    return { median: ms[Math.floor(N / 2)]!, p90: ms[Math.floor(N * 0.9)]! };
  };
  const noop = await time('/noop');
  for (const path of ['/noop', '/hash', '/verify']) {
    const r = path === '/noop' ? noop : await time(path);
    console.log(`${path.padEnd(8)} median ${r.median.toFixed(1)} ms  p90 ${r.p90.toFixed(1)} ms  (minus /noop: ${(r.median - noop.median).toFixed(1)} ms)`);
  }
} finally {
  process.kill(-child.pid!, 'SIGTERM');
}
