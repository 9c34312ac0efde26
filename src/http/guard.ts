import type { RouteConfig } from '@hono/zod-openapi';
import { keyMayCarry } from '../access/api-key-statement.ts';
import type { PermissionCode } from '../core/permissions.ts';
import type { LinkAction } from '../core/signed-links.ts';
import { authenticate, authenticateWrite, signedOr, verdictLastWrite } from './auth.ts';
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
   * Open to a session restricted to enrolling a second factor (contract: "Second factor"): the
   * own-account mfa/* routes, getLoginUserInformation and logout. Every other route answers 403
   * "second factor required" to such a session. Only for routes without a permission code.
   */
  mfaEnrolment?: boolean;
}

/**
 * Declares a route's permission next to it: adds the bearer security scheme and `x-permission`
 * to the OpenAPI operation, and the chain that checks the caller. `code` null means any logged-in
 * user (sysLoginUser, logout). The caller is judged by the request's runner (db/runner.ts) with
 * the handler's first plan; the chain makes the verdict the answer whatever the handler did:
 * - reads: authenticate (the token, then the verdict last);
 * - writes: authenticate → op-log recorder → verdict last, so the recorder sees the answer the
 *   client gets, refusals included (a 401 gets no row: the caller was never accepted).
 * The added error answers are in the return type too, so `hc<AppType>` callers see 401/403.
 */
export function guarded<R extends RouteConfig>(
  code: PermissionCode | null,
  route: R,
  opts: GuardOptions = {},
): Guarded<R> {
  const middleware = opts.signedLink && code
    ? [signedOr(code, opts.signedLink)]
    : opts.oplog
      ? [authenticateWrite(code, opts.mfaEnrolment === true && code === null), recordOperation, verdictLastWrite]
      : [authenticate(code, !opts.primary, opts.mfaEnrolment === true && code === null)];
  const out: RouteConfig = {
    ...route,
    // An API key is offered where one may be used (access/api-key-statement.ts: keyMayCarry).
    security: [{ bearerAuth: [] }, ...(keyMayCarry(code) ? [{ apiKeyAuth: [] }] : []), ...(opts.signedLink ? [{ signedLink: [] }] : [])],
    'x-permission': code ?? 'authenticated',
    description: [code ? `Requires permission \`${code}\`.` : 'Requires a logged-in user (no permission code).', route.description]
      .filter(Boolean)
      .join('\n\n'),
    responses: { ...commonErrors, ...route.responses },
    middleware,
  };
  return out as Guarded<R>;
}
