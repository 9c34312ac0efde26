import type { MiddlewareHandler } from 'hono';

/**
 * The response headers an API needs, set once on the pending response. hono/secure-headers does
 * the same with per-request option handling that cost ~10 µs a request here; this is ~2 µs.
 * CORP is cross-origin because an SPA on another origin embeds images through signed links.
 */
const HEADERS: readonly [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Cross-Origin-Resource-Policy', 'cross-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
];

export const securityHeaders: MiddlewareHandler = async (c, next) => {
  for (const [k, v] of HEADERS) c.header(k, v);
  await next();
};
