import type { MiddlewareHandler } from 'hono';
import type { PermissionCode } from '../../core/permissions.ts';
import { authenticate, authenticateWrite, verdictLastWrite } from '../../http/auth.ts';
import { recordOperation } from '../../http/op-log.ts';

/**
 * The same chain `guarded()` gives an /app route (http/guard.ts), for a dialect path: reads are
 * judged with their first plan; writes record one op-log row named after the operation they map
 * onto (`sysUser`/`edit`, …), so the log reads the same whichever dialect the client spoke.
 */
export function read(code: PermissionCode | null): [MiddlewareHandler] {
  return [authenticate(code)];
}

export function write(code: PermissionCode, module: string, action: string): [MiddlewareHandler, MiddlewareHandler, MiddlewareHandler, MiddlewareHandler] {
  const name: MiddlewareHandler = async (c, next) => {
    c.set('opAction', { module, action });
    await next();
  };
  return [name, authenticateWrite(code), recordOperation, verdictLastWrite];
}
