import type { MiddlewareHandler } from 'hono';
import type { PermissionCode } from '../../core/permissions.ts';
import { authenticate } from '../../http/auth.ts';
export { write } from '../guard.ts';

/**
 * The same chain `guarded()` gives an /app route (http/guard.ts), for a dialect path: reads are
 * judged with their first plan; writes record one op-log row named after the operation they map
 * onto (`sysUser`/`edit`, …), so the log reads the same whichever dialect the client spoke.
 */
export function read(code: PermissionCode | null): [MiddlewareHandler] {
  return [authenticate(code)];
}

