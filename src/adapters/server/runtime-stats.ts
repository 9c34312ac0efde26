import { arch, cpus, freemem, hostname, loadavg, platform, totalmem } from 'node:os';
import type { RuntimeStats } from '../../core/ports.ts';

const startedAt = Date.now();

/** The server process's own figures through node:os and process (Bun, Node and Deno all have them). */
export function serverRuntimeStats(): RuntimeStats {
  const mem = process.memoryUsage();
  const versions = process.versions as Record<string, string | undefined>;
  const runtime = versions.bun ? `Bun ${versions.bun}` : versions.deno ? `Deno ${versions.deno}` : `Node.js ${process.version}`;
  return {
    runtime,
    platform: platform(),
    arch: arch(),
    hostname: hostname(),
    cwd: process.cwd(),
    cpus: cpus().length,
    load1: loadavg()[0],
    memTotal: totalmem(),
    memFree: freemem(),
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    heapTotal: mem.heapTotal,
    uptimeSec: Math.round(process.uptime()),
    startedAt,
  };
}
