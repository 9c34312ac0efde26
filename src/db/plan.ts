import type { CompiledQuery, QueryResult } from 'kysely';
import type { GuardRule } from './guards.ts';
import type { AppError } from '../core/errors.ts';

/**
 * A request's database work as values (ARCHITECTURE.md, "A request's database work is a value"):
 * a service builds a plan, the request's runner (db/runner.ts) executes it with the caller's auth
 * at its head. Nothing reaches the database any other way on the request path.
 */

/** One statement with its bound values (a Kysely CompiledQuery fits). */
export interface Stmt {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** Reads that travel together (one round trip on D1), and the answer made of their rows. */
export interface ReadPlan<T> {
  readonly reads: readonly Stmt[];
  finish(rows: unknown[][]): T;
}

/** What a refused write answers: per guard rule, constraint or kind of failure. */
export interface WriteErrors {
  /** A UNIQUE violation: which value is taken (409). */
  unique?: string;
  /** A FOREIGN KEY violation: the error to answer (may look up which ids were unknown). */
  foreignKey?: () => Promise<AppError> | AppError;
  /** Per-plan messages of guard rules (e.g. which record was out of scope, which rule of a role). */
  messages?: Partial<Record<GuardRule, string>>;
}

/**
 * A write: one batch, all or nothing (a transaction on Bun, DB.batch() on D1) of guard statements,
 * writes and the read-back, in order. The runner puts the caller's check at its head.
 */
export interface WritePlan<T> {
  readonly batch: readonly CompiledQuery[];
  readonly errors?: WriteErrors;
  /**
   * The write's early checks, run only when the batch was refused by one of its rules (never by the
   * caller's own verdict): on the state the refused batch saw, they find the first rule broken, in
   * their order, with its precise message. The batch decides; they only explain. They get the
   * answer the batch gave.
   */
  explain?(refused: AppError): Promise<unknown>;
  /**
   * The plan is the same whoever the caller is (it uses the token's user id at most, never who
   * they turn out to be): while the caller has not been judged, the auth statement travels at the
   * head of the batch itself (one D1 round trip), with the caller's check as guards behind it.
   */
  anyCaller?: boolean;
  finish(results: QueryResult<unknown>[]): T;
}

/** A read plan of statements whose rows are the answer. */
export function readsOf(...reads: Stmt[]): ReadPlan<unknown[][]> {
  return { reads, finish: (rows) => rows };
}

/** A read plan of one statement; its rows are the answer. */
export function rowsOf<T>(stmt: Stmt): ReadPlan<T[]> {
  return { reads: [stmt], finish: (rows) => (rows[0] ?? []) as T[] };
}

/** A read plan of one statement; its first row (or undefined) is the answer. */
export function firstOf<T>(stmt: Stmt): ReadPlan<T | undefined> {
  return { reads: [stmt], finish: (rows) => rows[0]?.[0] as T | undefined };
}

/** A write plan whose answer is nothing. */
export function writeOf(batch: readonly CompiledQuery[], errors?: WriteErrors, explain?: (refused: AppError) => Promise<unknown>): WritePlan<void> {
  return { batch, errors, explain, finish: () => undefined };
}

/** A write plan whose answer is the batch's results, one per statement (multi-step flows such as login). */
export function resultsOf(batch: readonly CompiledQuery[], opts: { anyCaller?: boolean } = {}): WritePlan<QueryResult<unknown>[]> {
  return { batch, anyCaller: opts.anyCaller, finish: (results) => results };
}

/** The one row the last statement of a batch read (the answer a write reads back in its own batch). */
export function lastRow<T>(results: readonly { rows: unknown[] }[]): T | undefined {
  return results.at(-1)?.rows[0] as T | undefined;
}
