import { serve, type HttpBindings } from '@hono/node-server';
import { openNodeSqliteBinding } from '../adapters/server/node-sqlite.ts';
import { start, type Listening, type Runtime } from './start.ts';

/** Node ≥ 22: node:sqlite and @hono/node-server's HTTP server. */
export const nodeRuntime: Runtime = {
  name: 'node',
  openSqlite: openNodeSqliteBinding,
  serve: (fetch, { port, hostname }) =>
    new Promise<Listening>((ok) => {
      const server = serve({ fetch, port, hostname }, (info) =>
        ok({ url: `http://${hostname}:${info.port}`, stop: () => new Promise<void>((done) => server.close(() => done())) }),
      );
    }),
  client: { socketAddress: (_req, env) => (env as HttpBindings | undefined)?.incoming?.socket.remoteAddress },
};

await start(nodeRuntime);
