// Process figures from /proc for the workerd benches, limited to one process tree: other
// wrangler/workerd instances on the machine (test suites) must not count.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 1000 / 100; // USER_HZ

function stat(pid: string): { ppid: number; comm: string; cpuTicks: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), comm, cpuTicks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}

/** The workerd processes below `root` (wrangler's process tree). */
export function workerdUnder(root: number): string[] {
  const all = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const info = new Map(all.map((p) => [p, stat(p)] as const));
  const inTree = (pid: string) => {
    for (let cur: string | undefined = pid, hops = 0; cur && hops < 32; hops++) {
      if (Number(cur) === root) return true;
      const st = info.get(cur);
      cur = st ? String(st.ppid) : undefined;
    }
    return false;
  };
  return all.filter((p) => info.get(p)?.comm === 'workerd' && inTree(p));
}

/** CPU (user + system) used so far by those processes, in ms. */
export function cpuMs(pids: string[]): number {
  return pids.reduce((n, p) => n + (stat(p)?.cpuTicks ?? 0), 0) * TICK_MS;
}

/** Their resident memory now, in MiB. */
export function rssMiB(pids: string[]): number {
  let kb = 0;
  for (const p of pids) {
    try {
      kb += Number(readFileSync(`/proc/${p}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
}

/** Stops a detached child's whole process group (wrangler → workerd) and waits for it to exit. */
export async function stopGroup(child: import('node:child_process').ChildProcess): Promise<void> {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {}
  await new Promise((ok) => (child.exitCode !== null ? ok(null) : child.once('exit', ok)));
}
