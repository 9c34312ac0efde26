import type { ClassifyError, Clock, ReadSql, StorageProbe } from './ports.ts';

/** What readiness looks at (a subset of the app's deps). */
export interface ReadinessDeps {
  lifecycle?: Lifecycle | undefined;
  clock: Clock;
  read: ReadSql;
  classifyError?: ClassifyError | undefined;
  storage?: StorageProbe | undefined;
  config: { MIN_FREE_MB: number };
}

/** Where a server process is in its life: only `ready` takes work. */
export type LifecycleState = 'starting' | 'ready' | 'stopping';

/** Shared, mutable lifecycle state: the start-up sets `ready`, the shutdown `stopping`. */
export interface Lifecycle {
  state: LifecycleState;
}

export function createLifecycle(state: LifecycleState = 'starting'): Lifecycle {
  return { state };
}

/** Seconds a client or balancer should wait before trying again when not ready. */
export const NOT_READY_RETRY_AFTER = 5;

export type ReadyReport = { ok: true } | { ok: false; reason: string };

/** A probe result is reused this long, so a flood of probes cannot turn into a flood of fsyncs. */
const CACHE_MS = 1000;
const cache = new WeakMap<ReadinessDeps, { at: number; report: ReadyReport }>();

/**
 * Readiness (GET /health/ready): the process is ready (not starting or stopping), the database
 * answers a query, and, where there is local storage, it is writable with free space above
 * MIN_FREE_MB. The database passed its integrity check before the server started listening.
 */
export async function checkReadiness(deps: ReadinessDeps): Promise<ReadyReport> {
  const state = deps.lifecycle?.state ?? 'ready';
  if (state !== 'ready') return { ok: false, reason: state === 'starting' ? 'starting' : 'shutting down' };
  const now = deps.clock.now();
  const hit = cache.get(deps);
  if (hit && now - hit.at < CACHE_MS && now >= hit.at) return hit.report;
  const report = await probe(deps);
  cache.set(deps, { at: now, report });
  return report;
}

async function probe(deps: ReadinessDeps): Promise<ReadyReport> {
  try {
    await deps.read('SELECT id FROM users LIMIT 1', []);
  } catch (e) {
    const kind = deps.classifyError?.(e);
    return { ok: false, reason: kind === 'busy' ? 'the database is busy' : 'the database does not answer' };
  }
  if (!deps.storage) return { ok: true };
  try {
    await deps.storage.checkWritable();
  } catch {
    return { ok: false, reason: 'file storage is not writable' };
  }
  const floor = deps.config.MIN_FREE_MB * 1024 * 1024;
  try {
    if ((await deps.storage.freeBytes()) < floor) return { ok: false, reason: `free disk space is below MIN_FREE_MB (${deps.config.MIN_FREE_MB})` };
  } catch {
    return { ok: false, reason: 'free disk space cannot be read' };
  }
  return { ok: true };
}
