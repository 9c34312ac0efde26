// Serves the example SPA from its own origin, so the browser really does cross-origin calls
// (and CORS) against the API:   bun examples/spa/serve.ts [port]     (default 5173, or SPA_PORT)
import { join } from 'node:path';

const FILES: Record<string, string> = {
  '/index.html': 'text/html; charset=utf-8',
  '/app.js': 'text/javascript; charset=utf-8',
  '/style.css': 'text/css; charset=utf-8',
};

/** Starts the static server; port 0 picks a free one (read it from the returned server). */
export function serveSpa(opts: { port?: number; hostname?: string } = {}) {
  return Bun.serve({
    port: opts.port ?? 5173,
    hostname: opts.hostname ?? '127.0.0.1',
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const name = path === '/' ? '/index.html' : path;
      const type = FILES[name];
      if (!type || (req.method !== 'GET' && req.method !== 'HEAD')) return new Response('Not found', { status: 404 });
      return new Response(Bun.file(join(import.meta.dir, name)), {
        headers: { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' },
      });
    },
  });
}

if (import.meta.main) {
  const port = Number(process.argv[2] ?? process.env.SPA_PORT ?? 5173);
  const server = serveSpa({ port });
  const origin = `http://${server.hostname}:${server.port}`;
  console.log(`Example SPA on ${origin}/  (API: add ?api=http://127.0.0.1:3000; start the API with CORS_ORIGINS=${origin})`);
}
