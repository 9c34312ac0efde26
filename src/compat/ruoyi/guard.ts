import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { forbidden } from '../../core/errors.ts';
import type { PermissionCode } from '../../core/permissions.ts';
import { callerHolds } from '../../access/held.ts';
import { authenticate } from '../../http/auth.ts';
import { describeZodError } from '../../http/errors.ts';
import type { Runner } from '../../db/runner.ts';
import { badRequest } from '../../core/errors.ts';

export { write } from '../guard.ts';

/**
 * The dialect's routes are guarded by the same chain as ours (http/guard.ts), with our codes:
 * a read authenticates and the caller's verdict outranks the answer; a write (../guard.ts) also
 * records its op-log row, under our module and action names (so both APIs' rows read alike).
 */
export function read(code: PermissionCode | null): [MiddlewareHandler] {
  return [authenticate(code, true)];
}

/** Our request schema applied to the mapped input: its rules and its messages, as a 400. */
export function parsed<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw badRequest(describeZodError(result.error));
  return result.data;
}

/**
 * One RuoYi call that is two of our operations (e.g. a role saved with its menus): the second
 * one's code is checked too, as our own route for it would (403 naming the code).
 */
export async function requireCode(run: Runner, code: PermissionCode, why: string): Promise<void> {
  if (!(await callerHolds(run, code))) throw forbidden(`${why} also requires the permission ${code}`);
}
