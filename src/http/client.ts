import type { Context } from 'hono';
import type { Deps } from '../deps.ts';
import { parseUserAgent } from '../core/user-agent.ts';

/**
 * The caller's address: the socket's, or with TRUST_PROXY the last X-Forwarded-For hop — the one
 * our own proxy appended. Earlier hops are whatever the client sent and would let it pick an
 * address per request (dodging throttles, or locking out someone else's).
 */
export function clientIp(deps: Deps, req: Request, env: unknown): string {
  if (deps.config.TRUST_PROXY) {
    const xff = req.headers.get('x-forwarded-for')?.split(',').map((s) => s.trim()).filter(Boolean).at(-1);
    if (xff) return xff.slice(0, 64);
  }
  return (deps.client.socketAddress(req, env) ?? '').slice(0, 64);
}

/** Where the request came from, fixed once at the front of the chain (see captureClient). */
export interface ClientOrigin {
  ip: string;
  country: string | null;
  city: string | null;
}

/**
 * Reads the caller's address and location from the ORIGINAL request, before anything can replace
 * `c.req.raw`: the body limit rebuilds a request without Content-Length (chunked), and Bun's
 * `requestIP()` knows only the request object the server handed over. Everything later reads
 * `c.var.client`, so the address survives whatever body handling does.
 */
export function captureClient(deps: Deps, req: Request, env: unknown): ClientOrigin {
  const where = deps.client.location?.(req, env) ?? { country: null, city: null };
  return { ip: clientIp(deps, req, env), country: where.country, city: where.city };
}

/** What the logs record about the caller: the address captured at the front, and its device. */
export function clientInfo(c: Context) {
  const userAgent = (c.req.header('user-agent') ?? '').slice(0, 512);
  return { ...c.var.client, userAgent, ...parseUserAgent(userAgent) };
}
