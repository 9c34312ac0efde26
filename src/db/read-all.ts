import type { Compilable } from 'kysely';
import type { ReadMany } from '../core/ports.ts';

/**
 * Kysely SELECTs read together through deps.readMany, each answering its rows: one round trip on
 * D1 (on a plain-read route the request's deferred auth row travels with them, http/auth-gate.ts),
 * one statement after the other on servers. For reads whose answer needs more than one statement.
 */
export async function readAll<const Q extends readonly Compilable<any>[]>(
  deps: { readMany: ReadMany },
  queries: Q,
): Promise<{ -readonly [K in keyof Q]: Q[K] extends Compilable<infer O> ? O[] : never }> {
  return (await deps.readMany(queries.map((q) => q.compile()))) as never;
}
