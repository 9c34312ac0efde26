import { openNodeSqliteBinding } from '../adapters/server/node-sqlite';
import { start, type Listening, type Runtime } from './start';

/** The part of Deno's API this entry uses (tsc runs without Deno's types). */
interface ServeInfo {
  remoteAddr: { hostname: string };
}
declare const Deno: {
  serve(
    opts: { port: number; hostname: string; onListen(addr: { hostname: string; port: number }): void },
    handler: (req: Request, info: ServeInfo) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
};

/** Deno 2: node:sqlite (the same binding as Node) and Deno.serve. */
export const denoRuntime: Runtime = {
  name: 'deno',
  openSqlite: openNodeSqliteBinding,
  serve: (fetch, { port, hostname }) =>
    new Promise<Listening>((ok) => {
      const server = Deno.serve({ port, hostname, onListen: (addr) => ok({ url: `http://${addr.hostname}:${addr.port}`, stop: () => server.shutdown() }) }, (req, info) =>
        fetch(req, info),
      );
    }),
  client: { socketAddress: (_req, env) => (env as ServeInfo | undefined)?.remoteAddr?.hostname },
};

await start(denoRuntime);
