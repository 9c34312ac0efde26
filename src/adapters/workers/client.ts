import type { ClientFacts } from '../../deps';
import type { CfProperties } from './bindings';

/**
 * On Workers the client address is the one Cloudflare's edge writes into CF-Connecting-IP (a
 * client cannot forge it there), and the location comes from `request.cf`.
 */
export const workersClient: ClientFacts = {
  socketAddress: (c) => c.req.header('cf-connecting-ip') ?? undefined,
  location(c) {
    const cf = (c.req.raw as Request & { cf?: CfProperties }).cf;
    const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, 64) : null);
    return { country: text(cf?.country), city: text(cf?.city) };
  },
};
