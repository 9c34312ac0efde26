import type { RouteConfig } from '@hono/zod-openapi';
import type { PermissionCode } from '../core/permissions.ts';
import type { LinkAction } from '../core/signed-links.ts';
import { authenticate, authenticateWrite, enforcePermission, gateWrites, signedOr } from './auth.ts';
import { recordOperation } from './op-log.ts';
import { commonErrors } from './router.ts';

/** The route as guarded returns it: the shared error answers merged under the route's own. */
export type Guarded<R extends RouteConfig> = Omit<R, 'responses'> & {
  responses: Omit<typeof commonErrors, keyof R['responses']> & R['responses'];
};

export interface GuardOptions {
  /** Write operations record an op_log row (failures too). */
  oplog?: boolean;
  /** Also accept a signed link for this action instead of the bearer token (download/preview). */
  signedLink?: LinkAction;
  /**
   * A route without an op-log that still writes (logout, backups): it stays on the primary under
   * read replication. Plain read routes read from a replica after their auth check.
   */
  primary?: boolean;
  /**
   * With `oplog`: deferred auth for writes (http/auth-gate.ts). The auth statement travels with the
   * handler's first database call (its pre-read: one round trip for both on D1) and every write
   * batch is headed by the caller's check as guard statements. Only for handlers that do nothing
   * costly (a password hash) before their first database call: until then the caller is unchecked.
   */
  deferAuth?: boolean;
}

/**
 * Declares a route's permission next to it: adds the bearer security scheme and `x-permission`
 * to the OpenAPI operation, and the chain authenticate → (op-log) → permission check.
 * `code` null means any logged-in user (sysLoginUser, logout).
 * The added error answers are in the return type too, so `hc<AppType>` callers see 401/403.
 */
export function guarded<R extends RouteConfig>(
  code: PermissionCode | null,
  route: R,
  opts: GuardOptions = {},
): Guarded<R> {
  // One middleware layer fewer on plain reads: each layer is a promise hop on every request.
  const middleware =
    opts.signedLink && code
      ? [signedOr(code, opts.signedLink), enforcePermission]
      : opts.oplog && opts.deferAuth
        ? [authenticateWrite(code), recordOperation, gateWrites]
        : opts.oplog
        ? [authenticate(code), recordOperation, enforcePermission]
        : [authenticate(code, true, !opts.primary)];
  const out: RouteConfig = {
    ...route,
    security: opts.signedLink ? [{ bearerAuth: [] }, { signedLink: [] }] : [{ bearerAuth: [] }],
    'x-permission': code ?? 'authenticated',
    description: [code ? `Requires permission \`${code}\`.` : 'Requires a logged-in user (no permission code).', route.description]
      .filter(Boolean)
      .join('\n\n'),
    responses: { ...commonErrors, ...route.responses },
    middleware,
  };
  return out as Guarded<R>;
}
