/**
 * `npm run bench -- soak`: the server under steady mixed load for SOAK_MINUTES (default 60), in
 * windows of SOAK_WINDOW_MINUTES (default 5). Reads: getLoginUserInformation (the heaviest common
 * read) at a FIXED rate of SOAK_RPS (default 200/s), open loop: a request leaves on schedule whether
 * or not the previous ones answered, so a slow server shows as latency instead of fewer requests
 * (no coordinated omission), and a soak at a steady rate leaves the shared machine's other cores
 * usable. Writes: a loop of profile updates every 20 ms (each also writes an op-log row, so the log
 * grows as in production). Per window: achieved requests/s, p50/p99/max, the RSS floor (lowest
 * 1-second sample, i.e. what stays after GC) and peak, errors, the database size and the machine's
 * mean 1-minute load average. At the end: RSS-floor drift (goal: flat within 5%) and p99 drift.
 * Ports SOAK_PORT (default 3950) and SOAK_PORT+1, away from the other benches' 3900/3901.
 * The server child is killed on exit, on SIGINT/SIGTERM/SIGHUP and on an uncaught error.
 */
import { existsSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ADMIN_PASSWORD, post, rssKb, startServer } from './run.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 60);
const windowMinutes = Number(process.env.SOAK_WINDOW_MINUTES ?? 5);
const rps = Number(process.env.SOAK_RPS ?? 200);
const port = Number(process.env.SOAK_PORT ?? 3950);
const base = `http://127.0.0.1:${port}`;
const MAX_IN_FLIGHT = 1000;

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN);
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const fileMiB = (path: string) => (existsSync(path) ? statSync(path).size / 2 ** 20 : 0);

export async function run() {
  const server = await startServer({ PORT: String(port), BARE_PORT: String(port + 1) });
  const pid = server.child.pid!;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    server.stop();
  };
  // A soak is long: whatever ends this process must not leave the server running.
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(sig, () => {
      console.log(`soak: ${sig}, stopping the server`);
      stop();
      process.exit(130);
    });
  try {
    const token = (await post('/auth/login', { loginName: 'admin', password: ADMIN_PASSWORD }, undefined, base)).token as string;
    const auth = { authorization: `Bearer ${token}` };
    let running = true;
    let writes = 0;
    let writeErrors = 0;
    const writer = (async () => {
      for (let i = 0; running; i++) {
        const res = await fetch(`${base}/app/sysLoginUser/updateInfo`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ nickName: `Soak ${i % 1000}` }),
        }).catch(() => null);
        if (res?.status === 200 && ((await res.json()) as { status: number }).status === 200) writes++;
        else writeErrors++;
        await Bun.sleep(20);
      }
    })();

    // Open-loop reader: every 10 ms, send what the schedule owes.
    let latencies: number[] = [];
    let readErrors = 0;
    let dropped = 0;
    let inFlight = 0;
    const read = async () => {
      inFlight++;
      const t0 = performance.now();
      try {
        const res = await fetch(`${base}/app/sysLoginUser/getLoginUserInformation`, { headers: auth });
        const body = (await res.json()) as { status: number };
        if (res.status !== 200 || body.status !== 200) readErrors++;
        else latencies.push(performance.now() - t0);
      } catch {
        readErrors++;
      } finally {
        inFlight--;
      }
    };
    const started = performance.now();
    let sent = 0;
    const ticker = setInterval(() => {
      const owed = Math.floor(((performance.now() - started) / 1000) * rps) - sent;
      for (let i = 0; i < owed; i++) {
        sent++;
        if (inFlight >= MAX_IN_FLIGHT) dropped++;
        else void read();
      }
    }, 10);

    const rows: Record<string, number | string>[] = [];
    const windows = Math.max(1, Math.round(minutes / windowMinutes));
    console.log(`soak: ${minutes} min in ${windowMinutes}-min windows, ${rps} reads/s open loop on getLoginUserInformation + a profile-update loop; server pid ${pid}, db ${server.dbPath}`);
    for (let w = 0; w < windows; w++) {
      let floor = Infinity;
      let peak = 0;
      const loads: number[] = [];
      const sampler = setInterval(() => {
        const kb = rssKb(pid, 'VmRSS');
        floor = Math.min(floor, kb);
        peak = Math.max(peak, kb);
        loads.push(loadavg()[0]!);
      }, 1000);
      const [w0, we0, re0, d0] = [writes, writeErrors, readErrors, dropped];
      latencies = [];
      const t0 = performance.now();
      await Bun.sleep(windowMinutes * 60_000);
      clearInterval(sampler);
      const lat = latencies.sort((a, b) => a - b);
      const seconds = (performance.now() - t0) / 1000;
      const row = {
        window: `${round(w * windowMinutes)}-${round((w + 1) * windowMinutes)} min`,
        'req/s': round(lat.length / seconds),
        p50: round(pct(lat, 50), 2),
        p99: round(pct(lat, 99), 2),
        max: round(lat[lat.length - 1] ?? NaN, 0),
        'rss floor MiB': round(floor / 1024),
        'rss peak MiB': round(peak / 1024),
        'read errors': readErrors - re0 + (dropped - d0),
        writes: writes - w0,
        'write errors': writeErrors - we0,
        'db MiB': round(fileMiB(server.dbPath) + fileMiB(`${server.dbPath}-wal`)),
        'load avg': round(loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length), 2),
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    running = false;
    clearInterval(ticker);
    await writer;
    console.log(`\nsoak: ${minutes} min in ${windowMinutes}-min windows, ${rps} reads/s open loop (achieved per window below) on getLoginUserInformation + a profile-update loop every 20 ms`);
    console.table(rows);
    const first = rows[0]!;
    const last = rows[rows.length - 1]!;
    const floors = rows.map((r) => Number(r['rss floor MiB']));
    const drift = (k: string) => (((Number(last[k]) - Number(first[k])) / Number(first[k])) * 100).toFixed(1);
    const afterWarmup = floors.length > 1 ? floors.slice(1) : floors;
    console.log(
      `RSS floor drift first→last ${drift('rss floor MiB')}%, spread after the first window ${(((Math.max(...afterWarmup) - Math.min(...afterWarmup)) / Math.min(...afterWarmup)) * 100).toFixed(1)}% (goal: within 5%); p99 drift ${drift('p99')}%; errors: ${rows.reduce((n, r) => n + Number(r['read errors']) + Number(r['write errors']), 0)}`,
    );
  } finally {
    stop();
  }
}

if (import.meta.main) {
  await run();
  process.exit(0);
}
