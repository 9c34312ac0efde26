/**
 * File upload/download throughput and server memory.
 *
 *   bun bench/files.ts            (FILE_MB=50 by default)
 *
 * Starts the real Bun server (src/entry/bun.ts) as a child process with a temporary database and
 * files folder, logs in, uploads a FILE_MB random file through multipart and downloads it again,
 * and reports MB/s both ways with the server's resident memory sampled from /proc during each
 * phase. Streaming shows as a peak RSS that stays far below the file size above the idle baseline.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MB = 1024 * 1024;
const fileMb = Number(process.env.FILE_MB ?? 50);
const password = 'Bench-Password-2026!';
const dir = mkdtempSync(join(tmpdir(), 'edge-admin-bench-'));
const port = 20000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}`;

const server = Bun.spawn([process.execPath, join(import.meta.dir, '..', 'src', 'entry', 'bun.ts')], {
  env: {
    ...process.env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_PATH: join(dir, 'admin.db'),
    FILES_DIR: join(dir, 'files'),
    JWT_SECRET: crypto.randomUUID() + crypto.randomUUID(),
    ADMIN_PASSWORD: password,
    CAPTCHA_ENABLED: 'false',
    LOG_REQUESTS: 'false',
    LOG_LEVEL: 'warn',
  },
  stdout: 'inherit',
  stderr: 'inherit',
});

function rssKb(field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  return Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
}

/** Samples the server's RSS every 10 ms while `fn` runs; returns fn's result and the peak. */
async function sampled<T>(fn: () => Promise<T>): Promise<{ result: T; peakMb: number; ms: number }> {
  let peak = rssKb('VmRSS');
  const timer = setInterval(() => (peak = Math.max(peak, rssKb('VmRSS'))), 10);
  const started = performance.now();
  try {
    const result = await fn();
    return { result, peakMb: Math.max(peak, rssKb('VmRSS')) / 1024, ms: performance.now() - started };
  } finally {
    clearInterval(timer);
  }
}

async function waitForServer() {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return;
    } catch {
      /* not up yet */
    }
    await Bun.sleep(50);
  }
  throw new Error('server did not start');
}

function hex(bytes: Uint8Array) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

try {
  await waitForServer();
  const login = (await (await fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ loginName: 'admin', password }),
  })).json()) as { data: { token: string } };
  const auth = { authorization: `Bearer ${login.data.token}` };

  const payload = new Uint8Array(fileMb * MB);
  for (let off = 0; off < payload.length; off += 65536) crypto.getRandomValues(payload.subarray(off, off + 65536));
  const expected = new Bun.CryptoHasher('sha256').update(payload).digest('hex');
  const form = new FormData();
  form.append('file', new Blob([payload], { type: 'application/octet-stream' }), 'bench.bin');

  await Bun.sleep(200);
  const idleMb = rssKb('VmRSS') / 1024;

  const up = await sampled(async () => {
    const res = await fetch(`${base}/app/sysFile/upload`, { method: 'POST', headers: auth, body: form });
    const body = (await res.json()) as { status: number; msg: string; data: { id: number; sha256: string; url: string } };
    if (res.status !== 200) throw new Error(`upload failed: ${res.status} ${body.msg}`);
    return body.data;
  });
  if (up.result.sha256 !== expected) throw new Error('server hash differs from the client hash');

  const down = await sampled(async () => {
    const res = await fetch(`${base}${up.result.url}`);
    if (res.status !== 200 || !res.body) throw new Error(`download failed: ${res.status}`);
    const hasher = new Bun.CryptoHasher('sha256');
    let n = 0;
    for await (const chunk of res.body) {
      hasher.update(chunk);
      n += chunk.byteLength;
    }
    return { n, sha: hasher.digest('hex') };
  });
  if (down.result.n !== payload.length || down.result.sha !== expected) throw new Error('downloaded bytes differ');

  const mbps = (ms: number) => (payload.length / MB / (ms / 1000)).toFixed(0);
  console.log(`files bench: ${fileMb} MiB, server pid ${server.pid}`);
  console.log(`  idle server RSS          ${idleMb.toFixed(1)} MiB`);
  console.log(`  upload   ${mbps(up.ms).padStart(5)} MiB/s  (${up.ms.toFixed(0)} ms)  peak RSS ${up.peakMb.toFixed(1)} MiB (+${(up.peakMb - idleMb).toFixed(1)})`);
  console.log(`  download ${mbps(down.ms).padStart(5)} MiB/s  (${down.ms.toFixed(0)} ms)  peak RSS ${down.peakMb.toFixed(1)} MiB (+${(down.peakMb - idleMb).toFixed(1)})`);
  console.log(`  VmHWM over the whole run ${(rssKb('VmHWM') / 1024).toFixed(1)} MiB; byte-exact round trip verified by sha256`);
} finally {
  server.kill();
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
