import type { CompiledQuery, QueryResult } from 'kysely';
import type { Deps } from '../../deps.ts';
import { guardedWrite, type WriteErrors } from '../../db/guarded-write.ts';
import { AppError } from '../../core/errors.ts';

export interface AccessErrors extends WriteErrors {
  /** The out_of_scope guard failed: the 404 to answer (the record is invisible to the caller). */
  outOfScope?: string;
  /** The outside_authority guard failed: the 403 message. */
  outsideAuthority?: string;
  /** org_in_use: the 400 message. */
  inUse?: string;
}

/**
 * guardedWrite with the messages of the access-control guard rules (migrations/0006): a batch that
 * would act outside the caller's authority or scope fails whole and answers 403 / 404.
 */
export function accessWrite(deps: Deps, queries: CompiledQuery[], errors: AccessErrors = {}): Promise<QueryResult<unknown>[]> {
  const messages: WriteErrors['messages'] = { ...errors.messages };
  if (errors.outOfScope) messages.out_of_scope = errors.outOfScope;
  if (errors.outsideAuthority) messages.outside_authority = errors.outsideAuthority;
  if (errors.inUse) messages.org_in_use = errors.inUse;
  return guardedWrite(deps, queries, { ...errors, messages });
}

/**
 * A write whose batch guards enforce every rule its early checks (`explain`) test, so it needs no
 * read before it (on D1: auth + the batch, 2 round trips). Only when the batch is refused do the
 * early checks run, on the state the refused batch saw (it changed nothing), to give the answer the
 * request always got: the first rule broken, in their order, with its precise message. If they all
 * pass (the state changed in between) the batch's own answer stands. Containment stays inside the
 * write: what decides is the batch, never the checks after it.
 */
export async function explainedWrite<T>(write: () => Promise<T>, explain: () => Promise<unknown>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof AppError && err.status < 500) await explain();
    throw err;
  }
}
