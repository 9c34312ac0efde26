import { openNodeSqliteBinding } from '../adapters/server/node-sqlite.ts';
import type { Listening, Runtime } from './start.ts';

/** The part of Deno's API this entry uses (tsc runs without Deno's types). */
interface ServeInfo {
  remoteAddr: { hostname: string };
}
declare const Deno: {
  permissions: { querySync(p: { name: 'ffi' }): { state: string } };
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

// Checked before the start-up (and @node-rs/argon2, a native addon) is loaded: without --allow-ffi
// Deno's own error blames npm's optional dependencies instead.
if (Deno.permissions.querySync({ name: 'ffi' }).state !== 'granted') {
  console.error('Deno needs --allow-ffi (password hashing uses the native @node-rs/argon2): start with `npm run start:deno`');
  process.exit(78);
}
const { start } = await import('./start.ts');
await start(denoRuntime);
