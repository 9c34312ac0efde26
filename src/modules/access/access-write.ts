import type { CompiledQuery, QueryResult } from 'kysely';
import type { Deps } from '../../deps';
import { AppError, badRequest, forbidden, notFound } from '../../core/errors';
import { failedGuard } from '../../core/guards';
import { guardedWrite, type WriteErrors } from '../users/guarded-write';

/** The one 403 answer of containment (contract: "Delegation: who may act on whom"). */
export const OUTSIDE_AUTHORITY = 'Refused: outside your authority (the target holds a permission or a data scope that you do not hold)';

export interface AccessErrors extends WriteErrors {
  /** The out_of_scope guard failed: the 404 to answer (the record is invisible to the caller). */
  outOfScope?: string;
  /** The outside_authority guard failed: the 403 message (default OUTSIDE_AUTHORITY). */
  outsideAuthority?: string;
  /** org_cycle: the 400 message. */
  cycle?: string;
  /** org_in_use: the 400 message, or a function that says which org (read after the refusal). */
  inUse?: string | (() => Promise<AppError>);
}

/**
 * guardedWrite plus the access-control guard rules (migrations/0006): a batch that would act
 * outside the caller's authority or scope fails whole, and the failure becomes its client error.
 */
export async function accessWrite(deps: Deps, queries: CompiledQuery[], errors: AccessErrors = {}): Promise<QueryResult<unknown>[]> {
  try {
    return await guardedWrite(deps, queries, errors);
  } catch (err) {
    if (err instanceof AppError) throw err;
    const rule = failedGuard(err);
    if (rule === 'outside_authority') throw forbidden(errors.outsideAuthority ?? OUTSIDE_AUTHORITY);
    if (rule === 'out_of_scope') throw notFound(errors.outOfScope ?? 'Not found');
    if (rule === 'org_cycle') throw badRequest(errors.cycle ?? 'parentId: an organisation cannot be moved under itself or one of its descendants');
    if (rule === 'org_in_use') {
      if (typeof errors.inUse === 'function') throw await errors.inUse();
      throw badRequest(errors.inUse ?? 'ids: an organisation that still has children or users cannot be deleted');
    }
    throw err;
  }
}
