import type { Deps } from '../deps';
import { parseUserAgent } from '../core/user-agent';

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

/** What the logs record about the caller's device. */
export function clientInfo(deps: Deps, req: Request, env: unknown) {
  const userAgent = (req.headers.get('user-agent') ?? '').slice(0, 512);
  return { ip: clientIp(deps, req, env), userAgent, ...parseUserAgent(userAgent) };
}
