// bun bench/workerd-upload-heap.ts — the Worker ISOLATE's memory with PARALLEL (16) uploads of
// SIZE_MIB (7) each in flight, on workerd.
// The production bundle (`wrangler deploy --dry-run`) runs in workerd through Miniflare, with local
// D1 and R2 and workerd's V8 inspector on a port of our own (under `wrangler dev`, wrangler's proxy
// holds the isolate's inspector session and the isolate does not answer a second one).
// Runtime.getHeapUsage of the Worker's isolate (`core:user:edge-admin`) gives the JS heap (usedSize
// of totalSize reserved) and backingStorageSize (ArrayBuffer bytes outside the heap, where upload
// chunks live; garbage not yet collected included). Reserved = totalSize + backingStorageSize,
// used = usedSize + backingStorageSize. The local R2/D1 simulators are other isolates: not counted.
// The inspector only answers while the isolate is idle, so the uploads are made to stall: every
// body stops after PAUSE_MIB (4.9: just before the first 5 MiB part boundary, where a stage holds
// the most) until the isolate has settled, the heap is read, then the bodies go on.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import type { D1Database } from '../src/adapters/workers/bindings.ts';
import { freePort } from '../test/e2e/servers.ts';
import { migrateD1 } from '../test/support/workerd.ts';

const ROOT = resolve(join(import.meta.dir, '..'));
const PARALLEL = Number(process.env.PARALLEL ?? 16);
const SIZE = Number(process.env.SIZE_MIB ?? 7) * 1024 * 1024;
const MiB = 1024 * 1024;
const PASSWORD = 'Upload-Bench-Pass-42';

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}
/** Reserved: the JS heap as allocated plus ArrayBuffers (the conservative figure); used: live heap plus ArrayBuffers. */
const isolateMiB = (h: HeapUsage) => (h.totalSize + (h.backingStorageSize ?? 0)) / MiB;
const usedMiB = (h: HeapUsage) => (h.usedSize + (h.backingStorageSize ?? 0)) / MiB;
const fmt = (h: HeapUsage) =>
  `${isolateMiB(h).toFixed(1)} MiB reserved / ${usedMiB(h).toFixed(1)} MiB used (JS heap ${(h.usedSize / MiB).toFixed(1)} used of ${(h.totalSize / MiB).toFixed(1)}, ArrayBuffers ${((h.backingStorageSize ?? 0) / MiB).toFixed(1)})`;

/**
 * A CDP session on one isolate; heap() is null when the inspector did not answer within 60 s (it
 * answers between the isolate's tasks, so while uploads keep it busy an answer may take seconds).
 */
async function inspect(url: string) {
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => {
    ws.addEventListener('open', ok);
    ws.addEventListener('error', fail);
  });
  let id = 0;
  const pending = new Map<number, (v: unknown) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (m.id !== undefined) pending.get(m.id)?.(m.result);
  });
  return {
    heap: () =>
      new Promise<HeapUsage | null>((ok) => {
        const i = ++id;
        const timer = setTimeout(() => (pending.delete(i), ok(null)), 60_000);
        pending.set(i, (v) => (clearTimeout(timer), pending.delete(i), ok(v as HeapUsage)));
        ws.send(JSON.stringify({ id: i, method: 'Runtime.getHeapUsage' }));
      }),
    close: () => ws.close(),
  };
}

const out = mkdtempSync(join(tmpdir(), 'edge-heap-'));
const built = spawnSync('node', [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', out], {
  cwd: ROOT,
  encoding: 'utf8',
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: 'true' },
});
if (built.status !== 0) throw new Error(built.stdout + built.stderr);

const inspectorPort = await freePort();
const mf = new Miniflare({
  name: 'edge-admin',
  modulesRoot: out,
  modules: [
    { type: 'ESModule', path: join(out, 'worker.js') },
    ...readdirSync(out).filter((f) => f.endsWith('.wasm')).map((f) => ({ type: 'CompiledWasm' as const, path: join(out, f) })),
  ],
  compatibilityDate: '2026-04-01',
  compatibilityFlags: ['nodejs_compat'],
  d1Databases: { DB: 'heap-bench' },
  r2Buckets: { FILES: 'heap-bench-files' },
  bindings: { JWT_SECRET: 'heap-bench-secret-heap-bench-secret-0123', ADMIN_PASSWORD: PASSWORD, CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false' },
  inspectorPort,
});
try {
  const base = (await mf.ready).toString().replace(/\/$/, '');
  await migrateD1((await mf.getD1Database('DB')) as unknown as D1Database);
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
  const target = targets.find((t) => t.id === 'core:user:edge-admin');
  if (!target) throw new Error(`no inspector target core:user:edge-admin: ${targets.map((t) => t.id).join(', ')}`);
  const login = await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) })).json();
  const token = (login as { data: { token: string } }).data.token;
  // Each upload is a streamed multipart body that stops after PAUSE_MIB of the file until `gate`
  // opens: while every upload waits there the isolate is idle (the inspector answers only then)
  // and holds what its stages buffered at that point — by default just under the first 5 MiB part
  // boundary, where an upload holds the most.
  const PAUSE = Number(process.env.PAUSE_MIB ?? 4.9) * MiB;
  let open!: () => void;
  const gate = new Promise<void>((ok) => (open = ok));
  const boundary = 'heapbench0123456789';
  const enc = new TextEncoder();
  const CHUNK = 256 * 1024;
  const sentUpTo: number[] = [];
  const body = (i: number, pause: boolean) => {
    let offset = 0;
    let headed = false;
    return new ReadableStream<Uint8Array>({
      async pull(c) {
        if (!headed) {
          headed = true;
          c.enqueue(enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big-${i}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`));
          return;
        }
        if (offset >= SIZE) {
          c.enqueue(enc.encode(`\r\n--${boundary}--\r\n`));
          c.close();
          return;
        }
        if (pause && offset >= PAUSE) await gate;
        const n = Math.min(CHUNK, SIZE - offset, pause && offset < PAUSE ? PAUSE - offset : Infinity);
        const chunk = new Uint8Array(n);
        crypto.getRandomValues(chunk.subarray(0, Math.min(n, 65536)));
        chunk[0] = i;
        c.enqueue(chunk);
        offset += n;
        sentUpTo[i] = offset;
      },
    }, { highWaterMark: 0 });
  };
  const upload = (i: number, pause = false) =>
    fetch(`${base}/app/sysFile/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: body(i, pause),
      duplex: 'half',
    } as RequestInit).then(async (r) => {
      const text = await r.text();
      if (r.status !== 200) console.log(`upload ${i}: ${r.status} ${text.slice(0, 200)}`);
      return r.status;
    });
  await upload(255); // warm-up
  const inspector = await inspect(target.webSocketDebuggerUrl);
  const heap0 = await inspector.heap();
  if (!heap0) throw new Error('the isolate does not answer Runtime.getHeapUsage');
  const started = performance.now();
  const running = Promise.all(Array.from({ length: PARALLEL }, (_, i) => upload(i, true)));
  // Wait until the uploads stop moving (all paused or held back by the isolate), then sample.
  let last = -1;
  for (let still = 0; still < 8; ) {
    await Bun.sleep(500);
    const total = sentUpTo.slice(0, PARALLEL).reduce((a, b) => a + (b ?? 0), 0);
    still = total === last ? still + 1 : 0;
    last = total;
  }
  const paused = [];
  for (let k = 0; k < 5; k++) {
    const h = await inspector.heap();
    if (h) paused.push(h);
    await Bun.sleep(200);
  }
  const waiting = sentUpTo.slice(0, PARALLEL).filter((n) => (n ?? 0) >= PAUSE).length;
  open();
  const statuses = await running;
  const ms = performance.now() - started;
  const after = await inspector.heap();
  inspector.close();
  console.log(`${PARALLEL} parallel uploads of ${SIZE / MiB} MiB: statuses ${[...new Set(statuses)].join(',')} in ${ms.toFixed(0)} ms`);
  console.log(`  isolate memory (workerd inspector): baseline ${fmt(heap0)}`);
  console.log(`  all uploads stalled (${waiting} of ${PARALLEL} had sent ${(PAUSE / MiB).toFixed(1)} MiB of their file, the rest held back by the isolate):`);
  for (const h of paused) console.log(`    ${fmt(h)}`);
  if (after) console.log(`  after ${fmt(after)}`);
} finally {
  await mf.dispose();
  rmSync(out, { recursive: true, force: true });
}
