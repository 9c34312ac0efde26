// bun bench/workerd-export-heap.ts — the users export on workerd: the production bundle
// (`wrangler deploy --dry-run`) in Miniflare with a local D1 of USERS (100000) users, POST
// /app/sysUser/export as the super admin, XLSX and CSV. Wall time for a reader that reads as fast
// as it can, then the Worker ISOLATE's memory (V8 inspector, Runtime.getHeapUsage: JS heap +
// ArrayBuffers, garbage not yet collected included) sampled while a slow reader pauses every
// 1 MiB (the isolate answers the inspector only when idle: paused, the export waits on
// backpressure), as bench/workerd-upload-heap.ts measures uploads. Alone: `npm run bench -- export-heap`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Miniflare } from 'miniflare';
import type { D1Database } from '../src/adapters/workers/bindings.ts';
import { freePort } from '../test/e2e/servers.ts';
import { migrateD1 } from '../test/support/workerd.ts';
import { readSheet } from '../src/core/xlsx-read.ts';

const ROOT = resolve(join(import.meta.dir, '..'));
const USERS = Number(process.env.USERS ?? 100_000);
const PASSWORD = 'Export-Bench-Pass-42';
const MiB = 1024 * 1024;

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}
const reserved = (h: HeapUsage) => (h.totalSize + (h.backingStorageSize ?? 0)) / MiB;

async function inspect(url: string) {
  const ws = new WebSocket(url);
  await new Promise((ok, fail) => (ws.addEventListener('open', ok), ws.addEventListener('error', fail)));
  let id = 0;
  const pending = new Map<number, (v: unknown) => void>();
  ws.addEventListener('message', (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (m.id !== undefined) pending.get(m.id)?.(m.result);
  });
  const heap = () =>
    new Promise<HeapUsage | null>((ok) => {
      const i = ++id;
      const timer = setTimeout(() => (pending.delete(i), ok(null)), 30_000);
      pending.set(i, (v) => (clearTimeout(timer), pending.delete(i), ok(v as HeapUsage)));
      ws.send(JSON.stringify({ id: i, method: 'Runtime.getHeapUsage' }));
    });
  return { heap, close: () => ws.close() };
}

export async function run() {
  const out = mkdtempSync(join(tmpdir(), 'edge-export-heap-'));
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
    d1Databases: { DB: 'export-heap-bench' },
    r2Buckets: { FILES: 'export-heap-bench-files' },
    bindings: { JWT_SECRET: 'export-bench-secret-export-bench-secret-01', ADMIN_PASSWORD: PASSWORD, CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false' },
    inspectorPort,
  });
  try {
    const base = (await mf.ready).toString().replace(/\/$/, '');
    const db = (await mf.getD1Database('DB')) as unknown as D1Database;
    await migrateD1(db);
    const login = async () =>
      ((await (await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) })).json()) as { data: { token: string } }).data.token;
    const token = await login(); // bootstraps the admin
    for (let from = 0; from < USERS; from += 20_000) {
      await db
        .prepare(`WITH RECURSIVE i(k) AS (SELECT ?1 UNION ALL SELECT k + 1 FROM i WHERE k < ?2)
          INSERT INTO users (login_name, password_hash, nick_name, email, phone, status, created_at, updated_at)
          SELECT 'bench_u' || k, 'x', '用户 ' || k, 'u' || k || '@example.com', '138' || printf('%08d', k), CASE WHEN k % 10 = 0 THEN 'disabled' ELSE 'enabled' END,
            strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || k || ' seconds'), '2026-11-01T00:00:00.000Z' FROM i`)
        .bind(from + 1, Math.min(USERS, from + 20_000))
        .run();
    }
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
    const target = targets.find((t) => t.id === 'core:user:edge-admin');
    if (!target) throw new Error('no inspector target core:user:edge-admin');
    const insp = await inspect(target.webSocketDebuggerUrl);
    const idle = await insp.heap();
    console.log(`users export on workerd (Miniflare, local D1), ${USERS} users; isolate at rest: ${idle ? reserved(idle).toFixed(1) : '?'} MiB reserved`);
    for (const format of ['csv', 'xlsx'] as const) {
      // A fresh connection each time (a pooled one that workerd closed meanwhile answers ECONNRESET).
      const request = () =>
        fetch(`${base}/app/sysUser/export`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ format }), keepalive: false });
      // Fast reader: wall time.
      const t0 = performance.now();
      const fast = await request();
      if (fast.status !== 200) throw new Error(`${format}: ${fast.status} ${await fast.text()}`);
      const body = new Uint8Array(await fast.arrayBuffer());
      const bytes = body.byteLength;
      const ms = performance.now() - t0;
      const rows = format === 'csv' ? body.filter((b) => b === 10).length - 1 : undefined;
      if (rows !== undefined && rows !== USERS + 1) throw new Error(`csv: ${rows} rows, expected ${USERS + 1}`);
      if (format === 'xlsx') {
        const sheet = await readSheet(body, { maxBytes: 64 * MiB, maxRows: USERS + 10, maxUncompressedBytes: 1024 * MiB });
        if (sheet.length !== USERS + 2) throw new Error(`xlsx: ${sheet.length - 1} rows, expected ${USERS + 1}`);
      }
      // Slow reader: pauses every MiB, samples the isolate's memory while it waits.
      const slow = await request();
      const reader = slow.body!.getReader();
      let got = 0;
      let next = MiB;
      let peak = 0;
      let samples = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        got += value.byteLength;
        if (got >= next) {
          next += MiB;
          await Bun.sleep(150);
          const h = await insp.heap();
          if (h) (peak = Math.max(peak, reserved(h))), samples++;
        }
      }
      console.log(`  ${format}: ${(ms / 1000).toFixed(1)} s, ${(bytes / MiB).toFixed(1)} MiB${rows === undefined ? '' : `, ${rows} rows`}; isolate peak ${peak.toFixed(1)} MiB reserved (JS heap + ArrayBuffers, ${samples} samples)`);
    }
    insp.close();
  } finally {
    await mf.dispose();
  }
}

if (import.meta.main) await run();
