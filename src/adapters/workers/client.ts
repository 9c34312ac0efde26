import type { ClientFacts } from '../../deps.ts';
import type { CfProperties } from './bindings.ts';

/** What the Worker entry hands Hono as `c.env` for each request. */
export interface WorkerRequestEnv {
  cf?: CfProperties | undefined;
}

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 64) : null);

/**
 * On Workers the client address is the one Cloudflare's edge writes into CF-Connecting-IP (a
 * client cannot forge it there), and the location comes from the request's `cf` object.
 */
export const workersClient: ClientFacts = {
  socketAddress: (req) => req.headers.get('cf-connecting-ip') ?? undefined,
  location(req, env) {
    const cf = (env as WorkerRequestEnv | undefined)?.cf ?? (req as Request & { cf?: CfProperties }).cf;
    return { country: text(cf?.country), city: text(cf?.city) };
  },
};
