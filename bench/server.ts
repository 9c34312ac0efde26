// The benchmark's server process: the real Bun entry (same config path as `npm start`) plus a
// bare Hono JSON handler on a second port of the same process, as the baseline.
import { Hono } from 'hono';
import { main } from '../src/entry/bun.ts';

const barePort = Number(process.env.BARE_PORT ?? 3901);
await main(process.env);
const bare = new Hono().get('/bare', (c) => c.json({ status: 200, msg: 'SUCCESS', data: { ok: true }, traceId: 'x' }));
Bun.serve({ port: barePort, hostname: '127.0.0.1', fetch: bare.fetch });
console.log(JSON.stringify({ msg: 'bare listening', port: barePort }));
