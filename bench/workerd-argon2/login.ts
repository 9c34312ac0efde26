// bun bench/workerd-argon2/login.ts — the whole login on the real Worker under `wrangler dev --local`
// (argon2id verify in WebAssembly + JWT + a few local D1 statements), timed from outside against
// GET /health. Local D1 goes through extra processes, so read this as an upper bound of the
// CPU a login needs, never as a production latency or throughput figure.
import { E2E_ADMIN_PASSWORD, startWorkerTargets } from '../../test/e2e/servers.ts';

const N = Number(process.env.N ?? 15);
const t = await startWorkerTargets();
const base = t.captchaOff.baseUrl;
const body = (password: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ loginName: 'admin', password }),
});
async function time(label: string, go: () => Promise<Response>) {
  await (await go()).text();
  const ms: number[] = [];
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    const r = await go();
    await r.text();
    ms.push(performance.now() - s);
  }
  ms.sort((a, b) => a - b);
  console.log(`${label.padEnd(22)} median ${ms[Math.floor(N / 2)]!.toFixed(1)} ms  p90 ${ms[Math.floor(N * 0.9)]!.toFixed(1)} ms`);
}
try {
  await time('GET /health', () => fetch(`${base}/health`));
  await time('login (success)', () => fetch(`${base}/auth/login`, body(E2E_ADMIN_PASSWORD)));
} finally {
  await t.stop();
}
