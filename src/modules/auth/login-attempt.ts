import type { Context } from 'hono';
import { clientInfo } from '../../http/client.ts';
import { loginLogRow } from './login.service.ts';

/** Who is attempting: address, device and, on Workers, location. */
export function loginClient(c: Context) {
  return { ...clientInfo(c), traceId: c.get('traceId') };
}

/**
 * A login body refused before any check (400) is an attempt too: its login-log row, naming the
 * login name it carried ('' when none) and no user. Used by /auth and by the compat dialects'
 * login routes, so every refused attempt is logged the same way.
 */
export async function recordRefusedLogin(c: Context, name: string, message: string): Promise<void> {
  await c.get('run').record([loginLogRow(c.get('deps').clock, loginClient(c), name, 'failure', message, null)]);
}
