import type { MiddlewareHandler } from 'hono';
import type { PermissionCode } from '../core/permissions.ts';
import { authenticateWrite, verdictLastWrite } from '../http/auth.ts';
import { recordOperation } from '../http/op-log.ts';

/**
 * A dialect path's write (src/compat/*), guarded by the same chain `guarded()` gives an /app route
 * (http/guard.ts): the caller's code, one op-log row named after the operation it maps onto
 * (`sysUser`/`edit`, …) so the log reads the same whichever dialect the client spoke, and the
 * caller's verdict outranking the answer.
 */
export function write(code: PermissionCode | null, module: string, action: string): [MiddlewareHandler, MiddlewareHandler, MiddlewareHandler, MiddlewareHandler] {
  const name: MiddlewareHandler = async (c, next) => {
    c.set('opAction', { module, action });
    await next();
  };
  return [name, authenticateWrite(code), recordOperation, verdictLastWrite];
}
