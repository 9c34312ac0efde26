/**
 * `npm run bench -- runtimes`: the same app on Bun, Deno and Node (their own entries, started as
 * `npm start`, `npm run start:deno` and `npm run start:node` do), measured in one interleaved run so
 * that machine noise falls on all three alike: each round drives every runtime in turn (rotating who
 * goes first) with wrk on
 *   (b) a guarded read as a plain user holding only the route's code (GET /app/sysUser/detail?id=1)
 *   (c) GET /app/sysLoginUser/getLoginUserInformation
 * Prints the median requests/s, p50 and p99 over the rounds, the ratio to Bun, and each server's
 * peak RSS (VmHWM over the whole run). BENCH_ROUNDS (3), BENCH_DURATION (10s), BENCH_CONNECTIONS (50).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, serverCommand, SERVER_RUNTIMES, type ServerRuntime } from '../scripts/server-commands.ts';
import { ADMIN_PASSWORD, ensureWrk, load, plainUserWith, post, rssKb, waitFor } from './run.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FIRST_PORT = 3910;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Server {
  runtime: ServerRuntime;
  base: string;
  child: ChildProcess;
  adminToken: string;
  userToken: string;
}

async function startOne(runtime: ServerRuntime, port: number, dir: string): Promise<Server> {
  const [cmd, ...args] = serverCommand(runtime);
  mkdirSync(join(dir, runtime), { recursive: true });
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_PATH: join(dir, runtime, 'admin.db'),
      FILES_DIR: join(dir, runtime, 'files'),
      ADMIN_PASSWORD,
      CAPTCHA_ENABLED: 'false',
      LOG_REQUESTS: 'false',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/health`, 30_000);
  const adminToken = (await post('/auth/login', { loginName: 'admin', password: ADMIN_PASSWORD }, undefined, base)).token as string;
  const userToken = await plainUserWith(adminToken, 'sys:user:detail', base);
  return { runtime, base, child, adminToken, userToken };
}

type Row = Awaited<ReturnType<typeof load>>;

export async function run() {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'bench-runtimes-'));
  const servers: Server[] = [];
  try {
    for (const [i, runtime] of SERVER_RUNTIMES.entries()) servers.push(await startOne(runtime, FIRST_PORT + i, dir));
    const cases = [
      { name: '(b) guarded read', path: '/app/sysUser/detail?id=1', token: (s: Server) => s.userToken },
      { name: '(c) getLoginUserInformation', path: '/app/sysLoginUser/getLoginUserInformation', token: (s: Server) => s.adminToken },
    ];
    // Warm-up: JIT and statement caches of every runtime, on both routes.
    for (const s of servers) for (const c of cases) await load(`warmup ${s.runtime}`, s.base + c.path, s.child.pid!, [`Authorization: Bearer ${c.token(s)}`]);
    const samples = new Map<string, Row[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length]!);
      for (const c of cases) {
        for (const s of order) {
          const r = await load(`${c.name} ${s.runtime}`, s.base + c.path, s.child.pid!, [`Authorization: Bearer ${c.token(s)}`]);
          const key = `${c.name}|${s.runtime}`;
          samples.set(key, [...(samples.get(key) ?? []), r]);
        }
      }
      console.log(`round ${round + 1}/${ROUNDS} done`);
    }
    const peak = Object.fromEntries(servers.map((s) => [s.runtime, Math.round(rssKb(s.child.pid!, 'VmHWM') / 1024)]));
    const table = cases.flatMap((c) => {
      const bunRps = median(samples.get(`${c.name}|bun`)!.map((r) => r.rps));
      return servers.map((s) => {
        const rows = samples.get(`${c.name}|${s.runtime}`)!;
        const rps = median(rows.map((r) => r.rps));
        return {
          case: c.name,
          runtime: s.runtime,
          'req/s': Math.round(rps),
          'vs bun': Number((rps / bunRps).toFixed(2)),
          'p50 ms': median(rows.map((r) => r.p50)),
          'p99 ms': median(rows.map((r) => r.p99)),
          'peak RSS MiB': peak[s.runtime],
        };
      });
    });
    console.log(`\nwrk -t1 -c${process.env.BENCH_CONNECTIONS ?? '50'} -d${process.env.BENCH_DURATION ?? '10s'}, ${ROUNDS} interleaved rounds (medians); peak RSS = VmHWM of each server over the whole run`);
    console.table(table);
    return table;
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}
