// bun bench/workerd-upload-heap.ts — the Worker ISOLATE's peak memory with PARALLEL (16) uploads of
// SIZE_MIB (7) each in flight, on workerd. Also in `npm run bench` (alone: `npm run bench -- upload-heap`).
// The production bundle (`wrangler deploy --dry-run`) runs in workerd through Miniflare, with local
// D1 and R2 and workerd's V8 inspector on a port of our own (under `wrangler dev`, wrangler's proxy
// holds the isolate's inspector session and the isolate does not answer a second one).
// Runtime.getHeapUsage of the Worker's isolate (`core:user:edge-admin`) gives the JS heap (usedSize
// of totalSize reserved) and backingStorageSize (ArrayBuffer bytes outside the heap, where upload
// chunks live; garbage not yet collected included). Reserved = totalSize + backingStorageSize,
// used = usedSize + backingStorageSize. The local R2/D1 simulators are other isolates: not counted.
// The heap is polled throughout (a new Runtime.getHeapUsage POLL_MS (50) after each answer); the
// figure is the highest sample. The inspector does not answer while the bodies flow, only while the
// isolate is idle, so all bodies stop together every STOP_EVERY_MIB (1) of the file, for chunked
// bodies also 0.1 MiB before each 5 MiB part fills, and at the file's end, until 3 samples came.
// (HeapProfiler.collectGarbage hangs the isolate under workerd: the figures include garbage.)
// MODES (default `length,chunked`): `length` bodies carry a Content-Length (as a browser sends
// FormData), `chunked` bodies have none (Transfer-Encoding: chunked). A round counts only if every
// upload answered 200 with the file's size and sha256, and every file reads back with that sha256;
// otherwise the bench fails without printing a figure.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import type { D1Database } from '../src/adapters/workers/bindings.ts';
import { freePort } from '../test/e2e/servers.ts';
import { migrateD1 } from '../test/support/workerd.ts';
import { R2_PART_BYTES } from '../src/adapters/workers/r2-blobs.ts';

const ROOT = resolve(join(import.meta.dir, '..'));
const PARALLEL = Number(process.env.PARALLEL ?? 16);
const SIZE_MIB = Number(process.env.SIZE_MIB ?? 7);
const MODES = (process.env.MODES ?? 'length,chunked').split(',') as ('length' | 'chunked')[];
const POLL_MS = Number(process.env.POLL_MS ?? 50);
const PACE_MS = Number(process.env.PACE_MS ?? 0);
const CHUNK = Number(process.env.CHUNK_KIB ?? 64) * 1024;
const MiB = 1024 * 1024;
const SIZE = Math.round(SIZE_MIB * MiB);
const PASSWORD = 'Upload-Bench-Pass-42';

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}
/** Reserved: the JS heap as allocated plus ArrayBuffers (the conservative figure); used: live heap plus ArrayBuffers. */
const reservedMiB = (h: HeapUsage) => (h.totalSize + (h.backingStorageSize ?? 0)) / MiB;
const usedMiB = (h: HeapUsage) => (h.usedSize + (h.backingStorageSize ?? 0)) / MiB;
const fmt = (h: HeapUsage) =>
  `${reservedMiB(h).toFixed(1)} MiB reserved / ${usedMiB(h).toFixed(1)} MiB used (JS heap ${(h.usedSize / MiB).toFixed(1)} used of ${(h.totalSize / MiB).toFixed(1)}, ArrayBuffers ${((h.backingStorageSize ?? 0) / MiB).toFixed(1)})`;
const load = () => loadavg().map((n) => n.toFixed(2)).join(' ');
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A CDP session on one isolate; call() gives null when the inspector did not answer within 60 s. */
async function inspect(url: string) {
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => {
    ws.addEventListener('open', ok);
    ws.addEventListener('error', fail);
  });
  let id = 0;
  const pending = new Map<number, (v: unknown) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (m.error && process.env.VERBOSE) console.log(`inspector error: ${m.error.message}`);
    if (m.id !== undefined) pending.get(m.id)?.(m.error ? null : m.result);
  });
  const call = <T>(method: string) =>
    new Promise<T | null>((ok) => {
      const i = ++id;
      const timer = setTimeout(() => (pending.delete(i), ok(null)), 60_000);
      pending.set(i, (v) => (clearTimeout(timer), pending.delete(i), ok(v as T)));
      ws.send(JSON.stringify({ id: i, method }));
    });
  return {
    heap: () => call<HeapUsage>('Runtime.getHeapUsage'),
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
let failed = false;
try {
  const base = (await mf.ready).toString().replace(/\/$/, '');
  await migrateD1((await mf.getD1Database('DB')) as unknown as D1Database);
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
  const target = targets.find((t) => t.id === 'core:user:edge-admin');
  if (!target) throw new Error(`no inspector target core:user:edge-admin: ${targets.map((t) => t.id).join(', ')}`);
  const login = await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) })).json();
  const token = (login as { data: { token: string } }).data.token;
  const auth = { authorization: `Bearer ${token}` };
  const boundary = 'heapbench0123456789';
  const enc = new TextEncoder();

  /** A random file (distinct per upload: no deduplication) and its sha256. */
  const file = (tag: number) => {
    const bytes = new Uint8Array(SIZE);
    for (let o = 0; o < SIZE; o += 65536) crypto.getRandomValues(bytes.subarray(o, Math.min(SIZE, o + 65536)));
    return { bytes, sha256: sha256(bytes), tag };
  };
  const head = (i: number) => enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big-${String(i).padStart(4, "0")}.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  /**
   * Where the bodies stop (file offsets), all at once, so that the isolate goes idle and the
   * inspector answers (it does not while the bodies flow): every STOP_EVERY_MIB (1), for chunked
   * bodies also 0.1 MiB before each 5 MiB part fills (where a stage holds the most), and at the
   * file's end (the closing boundary not yet sent).
   */
  const stopsFor = (mode: 'length' | 'chunked') => {
    const out: number[] = [];
    // STOPS_MIB (comma-separated file offsets) overrides.
    if (process.env.STOPS_MIB) out.push(...process.env.STOPS_MIB.split(',').map((m) => Number(m) * MiB));
    else {
      const every = Number(process.env.STOP_EVERY_MIB ?? 1) * MiB;
      for (let at = every; every > 0 && at < SIZE; at += every) out.push(at);
      if (mode === 'chunked') for (let at = R2_PART_BYTES - MiB / 10; at < SIZE; at += R2_PART_BYTES) out.push(at);
    }
    out.push(SIZE);
    return [...new Set(out.filter((n) => n <= SIZE).map(Math.round))].sort((a, b) => a - b);
  };
  /** One round's bodies: each stops at every stop until `release(j)`; sent[i] is how far body i got into its file. */
  const bodies = (mode: 'length' | 'chunked') => {
    const length = head(0).byteLength + SIZE + tail.byteLength;
    const stops = stopsFor(mode);
    const gates = stops.map(() => Promise.withResolvers<void>());
    const sent: number[] = [];
    const make = (i: number, bytes: Uint8Array) => {
      let off = -1;
      sent[i] = 0;
      return new ReadableStream<Uint8Array>({
        async pull(c) {
          if (PACE_MS > 0) await Bun.sleep(PACE_MS);
          if (off < 0) return (off = 0), c.enqueue(head(i));
          if (off >= SIZE) {
            const j = stops.indexOf(SIZE);
            if (j >= 0) await gates[j]!.promise;
            if (off === SIZE) (off++, c.enqueue(tail));
            else c.close();
            return;
          }
          const j = stops.findIndex((at) => at >= off && at < SIZE);
          if (j >= 0 && stops[j] === off) await gates[j]!.promise;
          const n = Math.min(CHUNK, SIZE - off, j >= 0 && stops[j]! > off ? stops[j]! - off : Infinity);
          c.enqueue(bytes.subarray(off, off + n));
          off += n;
          sent[i] = off;
        },
      }, { highWaterMark: 0 });
    };
    return { length, stops, sent, make, release: (j: number) => gates[j]!.resolve() };
  };
  type Rec = { status: number; msg: string; data: { id: number; size: number; sha256: string } };
  /** Uploads one file; resolves to its record, or throws unless it answered 200 with the file's size and sha256. */
  const upload = async (i: number, f: { bytes: Uint8Array; sha256: string }, mode: 'length' | 'chunked', body: { length: number; stream: ReadableStream<Uint8Array> }) => {
    const r = await fetch(`${base}/app/sysFile/upload`, {
      method: 'POST',
      headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, ...(mode === 'length' ? { 'content-length': String(body.length) } : {}) },
      body: body.stream,
      duplex: 'half',
    } as RequestInit);
    const text = await r.text();
    if (r.status !== 200) throw new Error(`upload ${i} (${mode}): ${r.status} ${text.slice(0, 200)}`);
    const rec = JSON.parse(text) as Rec;
    if (rec.data.size !== SIZE || rec.data.sha256 !== f.sha256) throw new Error(`upload ${i} (${mode}): stored ${rec.data.size} bytes, sha256 ${rec.data.sha256}; sent ${SIZE}, ${f.sha256}`);
    return rec.data;
  };
  /** Reads a stored file back whole and checks its sha256. */
  const readBack = async (id: number, expected: string) => {
    const got = await fetch(`${base}/app/sysFile/download?id=${id}`, { headers: auth });
    const back = new Uint8Array(await got.arrayBuffer());
    if (got.status !== 200 || back.byteLength !== SIZE || sha256(back) !== expected) throw new Error(`file ${id} reads back differently (${got.status}, ${back.byteLength} bytes)`);
  };

  // Warm-up: one upload of each mode (not stopped), read back whole.
  for (const mode of MODES) {
    const f = file(-1);
    const b = bodies(mode);
    b.stops.forEach((_, j) => b.release(j));
    await readBack((await upload(1000, f, mode, { length: b.length, stream: b.make(0, f.bytes) })).id, f.sha256);
  }
  console.log(`warm-up: one ${SIZE_MIB} MiB upload of each mode (${MODES.join(', ')}) read back identical`);
  const inspector = await inspect(target.webSocketDebuggerUrl);

  for (const mode of MODES) {
    const files = Array.from({ length: PARALLEL }, (_, i) => file(i));
    const b = bodies(mode);
    await Bun.sleep(2000);
    const baseline = await inspector.heap();
    if (!baseline) throw new Error('the isolate does not answer Runtime.getHeapUsage');
    const loadBefore = load();
    const started = performance.now();
    let done = false;
    const running = Promise.allSettled(files.map((f, i) => upload(i, f, mode, { length: b.length, stream: b.make(i, f.bytes) }))).finally(() => (done = true));
    // Poll throughout: one request at a time, the next POLL_MS after each answer. A sample taken
    // while every body is stopped at stop j is marked with j.
    const samples: { at: number; h: HeapUsage; stop?: number }[] = [];
    let silent = 0;
    let stoppedAt: number | undefined;
    const polling = (async () => {
      while (!done) {
        const stop = stoppedAt;
        const h = await inspector.heap();
        if (h) samples.push({ at: performance.now() - started, h, stop: stop === stoppedAt ? stop : undefined });
        else silent++;
        await Bun.sleep(POLL_MS);
      }
    })();
    const stalls: { stop: number; there: number; settledMs: number }[] = [];
    for (const [j, at] of b.stops.entries()) {
      // Settled: every body at the stop (or its upload over) and nothing sent for 2 s.
      const t0 = performance.now();
      let last = -1;
      for (let still = 0; still < 4 && !done; ) {
        await Bun.sleep(500);
        const total = b.sent.reduce((a, n) => a + n, 0);
        still = total === last ? still + 1 : 0;
        last = total;
      }
      const there = b.sent.filter((n) => n >= at).length;
      stalls.push({ stop: at, there, settledMs: performance.now() - t0 });
      stoppedAt = j;
      const before = samples.length;
      for (let waited = 0; samples.filter((x, k) => k >= before && x.stop === j).length < 3 && waited < 60_000 && !done; waited += 100) await Bun.sleep(100);
      stoppedAt = undefined;
      b.release(j);
    }
    const results = await running;
    const ms = performance.now() - started;
    const loadAfter = load();
    await polling;
    const bad = results.filter((r) => r.status === 'rejected');
    if (bad.length) {
      for (const r of bad) console.log(`  ${(r as PromiseRejectedResult).reason}`);
      throw new Error(`${mode}: ${bad.length} of ${PARALLEL} uploads failed; no figure`);
    }
    const recs = results.map((r) => (r as PromiseFulfilledResult<Rec['data']>).value);
    for (const [i, rec] of recs.entries()) await readBack(rec.id, files[i]!.sha256);
    if (samples.length === 0) throw new Error(`${mode}: the inspector answered no heap sample during the uploads; no figure`);
    if (process.env.VERBOSE) for (const x of samples) console.log(`    ${(x.at / 1000).toFixed(2)} s ${x.stop === undefined ? '' : `[stop ${x.stop}] `}${fmt(x.h)}`);
    const peakReserved = samples.reduce((a, s) => (reservedMiB(s.h) > reservedMiB(a.h) ? s : a));
    const peakUsed = samples.reduce((a, s) => (usedMiB(s.h) > usedMiB(a.h) ? s : a));
    const where = (x: { at: number; stop?: number }) => `at ${(x.at / 1000).toFixed(1)} s${x.stop === undefined ? ' (flowing or settling)' : ` (stopped at ${(b.stops[x.stop]! / MiB).toFixed(2)} MiB)`}`;
    console.log(`\n${mode === 'length' ? 'Content-Length' : 'chunked (no Content-Length)'}: PARALLEL=${PARALLEL} SIZE_MIB=${SIZE_MIB}: all ${PARALLEL} answered 200 with size and sha256 right, all read back identical; ${ms.toFixed(0)} ms wall (stops included)`);
    console.log(`  load average (1/5/15 min) before ${loadBefore}, after ${loadAfter}`);
    console.log(`  baseline (idle, 2 s before): ${fmt(baseline)}`);
    for (const [j, st] of stalls.entries()) {
      const at = samples.filter((x) => x.stop === j);
      const top = at.length ? at.reduce((a, x) => (reservedMiB(x.h) > reservedMiB(a.h) ? x : a)) : undefined;
      console.log(`  stopped at ${(st.stop / MiB).toFixed(2)} MiB (${st.there} of ${PARALLEL} bodies there): ${top ? fmt(top.h) : 'NO ANSWER'} (${at.length} samples)`);
    }
    console.log(`  peak reserved ${where(peakReserved)}: ${fmt(peakReserved.h)}`);
    console.log(`  peak used     ${where(peakUsed)}: ${fmt(peakUsed.h)}`);
    console.log(`  ${samples.length} samples (${samples.filter((x) => x.stop === undefined).length} while flowing or settling), ${silent} unanswered within 60 s`);
    const ok = reservedMiB(peakReserved.h) < 64;
    console.log(`  → peak ${reservedMiB(peakReserved.h).toFixed(1)} MiB reserved / ${usedMiB(peakUsed.h).toFixed(1)} MiB used: ${ok ? 'under' : 'NOT under'} 64 MiB (above the baseline: +${(reservedMiB(peakReserved.h) - reservedMiB(baseline)).toFixed(1)} / +${(usedMiB(peakUsed.h) - usedMiB(baseline)).toFixed(1)})`);
  }
  inspector.close();
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await mf.dispose();
  rmSync(out, { recursive: true, force: true });
}
if (failed) process.exit(1);
