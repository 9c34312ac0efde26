/**
 * `npm run bench -- soak`: the server under steady mixed load for SOAK_MINUTES (default 60), in
 * windows of SOAK_WINDOW_MINUTES (default 5). Reads: wrk on getLoginUserInformation (the heaviest
 * common read); writes: a loop of profile updates (each also writes an op-log row, so the log grows
 * as in production). Per window: requests/s, p50/p99, the RSS floor (lowest sample, i.e. what stays
 * after GC) and peak, and errors. At the end: RSS-floor drift (goal: flat within 5%) and p99 drift.
 */
import { spawn } from 'node:child_process';
import { ADMIN_PASSWORD, ensureWrk, post, rssKb, startServer, toMs } from './run.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 60);
const windowMinutes = Number(process.env.SOAK_WINDOW_MINUTES ?? 5);
const CONNECTIONS = process.env.BENCH_CONNECTIONS ?? '20';
const PORT = 3900;
const base = `http://127.0.0.1:${PORT}`;

function wrk(seconds: number, url: string, headers: string[]) {
  return new Promise<string>((resolve) => {
    const p = spawn('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...headers.flatMap((h) => ['-H', h]), url]);
    let s = '';
    p.stdout.on('data', (d) => (s += d));
    p.on('close', () => resolve(s));
  });
}

export async function run() {
  ensureWrk();
  const server = await startServer();
  const pid = server.child.pid!;
  try {
    const token = (await post('/auth/login', { loginName: 'admin', password: ADMIN_PASSWORD })).token as string;
    let writing = true;
    let writes = 0;
    let writeErrors = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await fetch(`${base}/app/sysLoginUser/updateInfo`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ nickName: `Soak ${i % 1000}` }),
        }).catch(() => null);
        if (res?.status === 200) writes++;
        else writeErrors++;
        await res?.arrayBuffer().catch(() => undefined);
        await Bun.sleep(20);
      }
    })();
    const rows: Record<string, number | string>[] = [];
    const windows = Math.max(1, Math.round(minutes / windowMinutes));
    for (let w = 0; w < windows; w++) {
      let floor = Infinity;
      let peak = 0;
      const sampler = setInterval(() => {
        const kb = rssKb(pid, 'VmRSS');
        floor = Math.min(floor, kb);
        peak = Math.max(peak, kb);
      }, 1000);
      const [w0, e0] = [writes, writeErrors];
      const out = await wrk(Math.round(windowMinutes * 60), `${base}/app/sysLoginUser/getLoginUserInformation`, [`Authorization: Bearer ${token}`]);
      clearInterval(sampler);
      rows.push({
        window: `${w * windowMinutes}-${(w + 1) * windowMinutes} min`,
        'req/s': Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]),
        p50: toMs(out.match(/^\s*50%\s+(\S+)/m)?.[1] ?? ''),
        p99: toMs(out.match(/^\s*99%\s+(\S+)/m)?.[1] ?? ''),
        'rss floor MiB': Math.round(floor / 1024),
        'rss peak MiB': Math.round(peak / 1024),
        'read errors': Number(out.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0) + Number(out.match(/Socket errors:.*?(\d+) timeout/)?.[1] ?? 0),
        writes: writes - w0,
        'write errors': writeErrors - e0,
      });
    }
    writing = false;
    await writer;
    console.log(`\nsoak: ${minutes} min in ${windowMinutes}-min windows, wrk -t1 -c${CONNECTIONS} on getLoginUserInformation + a profile-update loop`);
    console.table(rows);
    const first = rows[0]!;
    const last = rows[rows.length - 1]!;
    const drift = (k: string) => (((Number(last[k]) - Number(first[k])) / Number(first[k])) * 100).toFixed(1);
    console.log(`RSS floor drift ${drift('rss floor MiB')}% (goal: within 5%), p99 drift ${drift('p99')}%`);
  } finally {
    server.stop();
  }
}

if (import.meta.main) await run();
