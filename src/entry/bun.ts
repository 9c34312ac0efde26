import type { Server } from 'bun';
import { openBunSqlite } from '../adapters/bun/sqlite.ts';
import { start, type Runtime } from './start.ts';

export const bunRuntime: Runtime = {
  name: 'bun',
  openSqlite: openBunSqlite,
  serve(fetch, { port, hostname }) {
    const server = Bun.serve({
      port,
      hostname,
      // Bun's own cap would answer a bare 413 (no envelope, no CORS, no op-log row) before the app
      // runs; the app refuses oversize bodies itself, by Content-Length and on the stream.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (req, srv) => fetch(req, srv),
    });
    return { url: `http://${server.hostname}:${server.port}`, stop: () => server.stop() };
  },
  client: { socketAddress: (req, server) => (server as Server<unknown> | undefined)?.requestIP?.(req)?.address },
};

export const main = (env?: Record<string, string | undefined>) => start(bunRuntime, env);

if (import.meta.main) await main();
