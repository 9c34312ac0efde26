import type { Context } from 'hono';

/**
 * Where the runtime can finish work after the response (Workers: `executionCtx.waitUntil`), records
 * of the request (its op-log row, an API key's last use) are written there, so they cost the client
 * no round trip; elsewhere (servers) before the response, as always.
 */
export function afterResponse(c: Context, work: Promise<void>): Promise<void> {
  let ctx: { waitUntil(p: Promise<unknown>): void } | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    ctx = undefined; // Hono throws when the runtime gave no execution context
  }
  if (!ctx) return work;
  ctx.waitUntil(work);
  return Promise.resolve();
}
