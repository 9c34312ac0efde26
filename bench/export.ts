// bun bench/export.ts — a users-like export (7 columns: id, login, Chinese name, email, phone,
// status, date) of ROWS (100000) rows from an async generator, as XLSX and as CSV:
// 1. Bun: each export in a fresh process, read as fast as it comes; wall time, and the process's
//    RSS before the export and its peak (VmHWM) after; BIG (1000000) rows too, to show the peak
//    does not grow with the row count.
// 2. workerd (Miniflare, the Worker bundled by wrangler as in production): the export streamed as
//    a response body. Time and the workerd process's CPU (/proc: an upper bound of the isolate's,
//    it includes workerd itself) for a reader that reads as fast as it can; then the ISOLATE's
//    memory (V8 inspector, Runtime.getHeapUsage: JS heap + ArrayBuffers) sampled while a slow
//    reader pauses every 1 MiB (the isolate answers the inspector only when idle: with the reader
//    paused, the export waits on backpressure).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import { freePort } from '../test/e2e/servers.ts';
import { cpuMs, workerdUnder } from './proc.ts';

const ROOT = resolve(import.meta.dir, '..');
const ROWS = Number(process.env.ROWS ?? 100_000);
const BIG = Number(process.env.BIG ?? 1_000_000);
const MiB = 1024 * 1024;
const statusKb = (field: string) => Number(readFileSync('/proc/self/status', 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0);

if (process.argv[2] === '--child') {
  const [format, rows] = [process.argv[3]!, Number(process.argv[4])];
  const { xlsxStream } = await import('../src/core/xlsx-write.ts');
  const { csvStream } = await import('../src/core/csv.ts');
  const { USER_HEADER, userRows } = await import('../test/support/sheets.ts');
  const write = format === 'csv' ? csvStream : xlsxStream;
  const drain = async (n: number) => {
    let bytes = 0;
    for await (const chunk of write(USER_HEADER, userRows(n).rows, { timeZone: 'Asia/Shanghai' })) bytes += chunk.byteLength;
    return bytes;
  };
  if (process.argv[5] === 'heap') {
    // live JS heap after a forced collection, every 100,000 rows
    const { heapStats } = await import('bun:jsc');
    const src = userRows(rows);
    const sizes: number[] = [];
    for await (const _ of write(USER_HEADER, src.rows)) {
      if (src.pulled() >= (sizes.length + 1) * 100_000) {
        Bun.gc(true);
        sizes.push(heapStats().heapSize / MiB);
      }
    }
    console.log(JSON.stringify(sizes));
    process.exit(0);
  }
  await drain(1000); // warm-up: modules compiled, JIT
  Bun.gc(true);
  const beforeKb = statusKb('VmRSS');
  const t0 = performance.now();
  const bytes = await drain(rows);
  const ms = performance.now() - t0;
  console.log(JSON.stringify({ ms, bytes, beforeMiB: beforeKb / 1024, peakMiB: statusKb('VmHWM') / 1024 }));
  process.exit(0);
}

function onBun(format: string, rows: number) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bench/export.ts'), '--child', format, String(rows)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  const x = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { ms: number; bytes: number; beforeMiB: number; peakMiB: number };
  console.log(`| Bun | ${format} | ${rows.toLocaleString('en')} | ${(x.ms / 1000).toFixed(1)} s | ${Math.round(rows / (x.ms / 1000)).toLocaleString('en')} | ${(x.bytes / MiB).toFixed(1)} MiB | ${x.beforeMiB.toFixed(0)} → ${x.peakMiB.toFixed(0)} MiB peak |`);
}

console.log(`users-like export from an async generator (${new Date().toISOString().slice(0, 10)})\n`);
console.log('| runtime | format | rows | time | rows/s | file | RSS before → peak |');
console.log('|---|---|---|---|---|---|---|');
for (const format of ['xlsx', 'csv']) for (const rows of [ROWS, BIG]) onBun(format, rows);
{
  const r = spawnSync(process.execPath, [join(ROOT, 'bench/export.ts'), '--child', 'xlsx', String(3 * 100_000), 'heap'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  const sizes = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as number[];
  console.log(`\nBun, xlsx: live JS heap after a forced GC at 100k / 200k / 300k rows: ${sizes.map((m) => m.toFixed(1)).join(' / ')} MiB (the peaks above are garbage not yet collected)`);
}

// ---- workerd
const dir = join(tmpdir(), `export-bench-${process.pid}`);
try {
  writeFileSync(join(tmpdir(), `export-bench-${process.pid}.toml`), `name = "export-bench"\nmain = "${join(ROOT, 'bench/export-worker.ts')}"\ncompatibility_date = "2026-04-01"\ncompatibility_flags = ["nodejs_compat"]\nminify = true\n`);
  const built = spawnSync('node', [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', dir, '-c', join(tmpdir(), `export-bench-${process.pid}.toml`)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: 'true' },
  });
  if (built.status !== 0) throw new Error(built.stdout + built.stderr);
  const script = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.js'))!), 'utf8');
  const inspectorPort = await freePort();
  const mf = new Miniflare({ name: 'export-bench', modules: true, script, compatibilityDate: '2026-04-01', compatibilityFlags: ['nodejs_compat'], inspectorPort });
  try {
    const base = (await mf.ready).toString().replace(/\/$/, '');
    const pids = workerdUnder(process.pid);
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
    const target = targets.find((t) => t.id === 'core:user:export-bench');
    if (!target) throw new Error(`no inspector target: ${targets.map((t) => t.id).join(', ')}`);
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((ok, fail) => (ws.addEventListener('open', ok), ws.addEventListener('error', fail)));
    let id = 0;
    const waiting = new Map<number, (v: { usedSize: number; totalSize: number; backingStorageSize?: number }) => void>();
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { id?: number; result?: never };
      if (m.id !== undefined) waiting.get(m.id)?.(m.result!);
    });
    const heap = () => new Promise<{ usedSize: number; totalSize: number; backingStorageSize?: number }>((ok) => (waiting.set(++id, ok), ws.send(JSON.stringify({ id, method: 'Runtime.getHeapUsage' }))));
    const idle = await heap();
    const fmt = (h: { usedSize: number; totalSize: number; backingStorageSize?: number }) => `${((h.usedSize + (h.backingStorageSize ?? 0)) / MiB).toFixed(1)} used / ${((h.totalSize + (h.backingStorageSize ?? 0)) / MiB).toFixed(1)} reserved`;
    console.log(`\nworkerd isolate at rest: ${fmt(idle)} MiB (JS heap + ArrayBuffers)\n`);
    console.log('| runtime | format | rows | time (fast reader) | workerd CPU | file | isolate peak while paused, MiB |');
    console.log('|---|---|---|---|---|---|---|');
    for (const format of ['xlsx', 'csv']) {
      for (const rows of [ROWS]) {
        await (await mf.dispatchFetch(`${base}/?format=${format}&rows=1000`)).arrayBuffer(); // warm-up
        const cpu0 = cpuMs(pids);
        const t0 = performance.now();
        const fast = await mf.dispatchFetch(`${base}/?format=${format}&rows=${rows}`);
        const bytes = (await fast.arrayBuffer()).byteLength;
        const ms = performance.now() - t0;
        const cpu = cpuMs(pids) - cpu0;
        // slow reader: pause every MiB and sample the isolate
        const slow = await mf.dispatchFetch(`${base}/?format=${format}&rows=${rows}`);
        const reader = slow.body!.getReader();
        let read = 0;
        let nextStop = MiB;
        let peak = idle;
        const samples: number[] = [];
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          read += value.byteLength;
          if (read >= nextStop) {
            nextStop += MiB;
            await Bun.sleep(200);
            for (let i = 0; i < 2; i++) {
              const h = await heap();
              samples.push(h.usedSize + (h.backingStorageSize ?? 0));
              if (h.totalSize + (h.backingStorageSize ?? 0) > peak.totalSize + (peak.backingStorageSize ?? 0)) peak = h;
            }
          }
        }
        // the two files differ only in their creation time (docProps/core.xml)
        if (Math.abs(read - bytes) > 64) throw new Error(`slow read got ${read} bytes, fast ${bytes}`);
        console.log(`| workerd | ${format} | ${rows.toLocaleString('en')} | ${(ms / 1000).toFixed(1)} s | ${(cpu / 1000).toFixed(1)} s | ${(bytes / MiB).toFixed(1)} MiB | ${fmt(peak)} (${samples.length} samples) |`);
      }
    }
    ws.close();
  } finally {
    await mf.dispose();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(join(tmpdir(), `export-bench-${process.pid}.toml`), { force: true });
}
