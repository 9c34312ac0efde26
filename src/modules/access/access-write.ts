import type { CompiledQuery, QueryResult } from 'kysely';
import type { Deps } from '../../deps.ts';
import { guardedWrite, type WriteErrors } from '../../db/guarded-write.ts';

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
