import type { Context } from 'hono';
import type { RequestPorts } from '../core/ports.ts';
import { parseUserAgent } from '../core/user-agent.ts';

/**
 * The caller's address: the socket's, or with TRUST_PROXY the last X-Forwarded-For hop — the one
 * our own proxy appended. Earlier hops are whatever the client sent and would let it pick an
 * address per request (dodging throttles, or locking out someone else's).
 */
export function clientIp(deps: RequestPorts, req: Request, env: unknown): string {
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
 * The caller's address and location, from the ORIGINAL request: the body limit rebuilds a request
 * without Content-Length (chunked), and Bun's `requestIP()` knows only the request object the
 * server handed over. So the original is held here, at the front of the chain, and everything
 * later reads `c.get('client')`. Looked up on first use only: most requests (reads) never ask, and
 * the lookup cost ~2 % of a guarded read.
 */
export function captureClient(deps: RequestPorts, req: Request, env: unknown): ClientOrigin {
  let ip: string | undefined;
  let where: { country: string | null; city: string | null } | undefined;
  const located = () => (where ??= deps.client.location?.(req, env) ?? { country: null, city: null });
  return {
    get ip() {
      return (ip ??= clientIp(deps, req, env));
    },
    get country() {
      return located().country;
    },
    get city() {
      return located().city;
    },
  };
}

/** What the logs record about the caller: the address captured at the front, and its device. */
export function clientInfo(c: Context) {
  const userAgent = (c.req.header('user-agent') ?? '').slice(0, 512);
  const { ip, country, city } = c.get('client');
  return { ip, country, city, userAgent, ...parseUserAgent(userAgent) };
}
