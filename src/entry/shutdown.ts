import process from 'node:process';
import type { Lifecycle } from '../core/readiness.ts';
import type { Logger } from '../core/ports.ts';

export interface ShutdownOptions {
  lifecycle: Lifecycle;
  /** Stops accepting connections; resolves once the requests in flight are done. */
  stopServer: () => Promise<void>;
  /** After the drain (or its deadline): stop timers, checkpoint the WAL, close the database. */
  finish: () => void | Promise<void>;
  /** SHUTDOWN_TIMEOUT_SECONDS in ms: requests still running then are cut. */
  timeoutMs: number;
  log: Logger;
  exit?: (code: number) => void;
}

/**
 * Graceful shutdown on SIGTERM / SIGINT: readiness answers 503 at once (the lifecycle turns
 * `stopping`), the listener closes (no new connections), requests in flight finish within the
 * deadline, then `finish` checkpoints and closes the database and the process exits 0. A second
 * signal while draining exits at once (1).
 */
export function installShutdown(opts: ShutdownOptions) {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let draining: Promise<void> | undefined;
  const shutdown = (signal: string) => {
    if (draining) {
      opts.log.log('warn', 'second signal while shutting down: exiting now', { signal });
      exit(1);
      return draining;
    }
    opts.lifecycle.state = 'stopping';
    opts.log.log('info', 'shutting down', { signal, timeoutSeconds: opts.timeoutMs / 1000 });
    draining = (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), opts.timeoutMs)));
      const drained = await Promise.race([opts.stopServer().then(() => 'drained' as const), deadline]);
      clearTimeout(timer);
      if (drained === 'timeout') opts.log.log('warn', 'requests still in flight at SHUTDOWN_TIMEOUT_SECONDS are cut', {});
      let code = 0;
      try {
        await opts.finish();
      } catch (e) {
        opts.log.log('error', 'closing the database failed', { error: (e as Error).message });
        code = 1;
      }
      opts.log.log('info', 'stopped', { drained: drained === 'drained' });
      exit(code);
    })();
    return draining;
  };
  const onSigterm = () => void shutdown('SIGTERM');
  const onSigint = () => void shutdown('SIGINT');
  process.on('SIGTERM', onSigterm);
  process.on('SIGINT', onSigint);
  return {
    shutdown,
    /** Removes the signal handlers (for a stop that is not a signal, e.g. tests). */
    uninstall() {
      process.off('SIGTERM', onSigterm);
      process.off('SIGINT', onSigint);
    },
  };
}
