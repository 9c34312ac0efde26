import { Hono, type MiddlewareHandler } from 'hono';
import type { Config } from '../../config.ts';
import { coreRoutes } from './core.routes.ts';
import { vbenCors, vbenEnvelope } from './envelope.ts';
import { systemRoutes } from './system.routes.ts';

/**
 * The vue-vben-admin dialect (docs/vben.md): vben 5's requests and answers, mapped onto our
 * services, rules and op log, mounted under VBEN_API_PREFIX. Off (undefined) without a prefix.
 * `cors` is for app.ts's front middleware, which answers preflights before any route is matched.
 */
export function vbenDialect(config: Config): { prefix: string; routes: Hono; cors: MiddlewareHandler } | undefined {
  const prefix = config.VBEN_API_PREFIX;
  if (!prefix) return undefined;
  const routes = new Hono();
  routes.use('*', vbenEnvelope);
  routes.route('/', coreRoutes());
  routes.route('/', systemRoutes());
  return { prefix, routes, cors: vbenCors(config.CORS_ORIGINS) };
}

export { applyVbenMenuPreset, vbenMenuPresetSql, VBEN_VIEWS } from './menu-preset.ts';
