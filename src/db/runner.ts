import { CompiledQuery, type QueryResult } from 'kysely';
import type { Caller } from '../core/caller.ts';
import { AppError, conflict, VerdictError } from '../core/errors.ts';
import type { DbPorts, ReadNow } from '../core/ports.ts';
import { failedGuard, GUARD_RULES, isForeignKeyViolation, isUniqueViolation } from './guards.ts';
import type { DbMeter } from './meter.ts';
import type { ReadPlan, Stmt, WritePlan } from './plan.ts';
import { firstOf, rowsOf } from './plan.ts';

/**
 * The caller's check, as access/ states it for one request (access/auth-statement.ts): the auth
 * statement, its verdict, and the same verdict as guard statements for the head of a write batch.
 */
export interface CallerCheck {
  /** From the verified token, known before the auth row is read. */
  readonly userId: number;
  readonly sessionId: string;
  /** The auth statements (read together, at the head of the request's first plan). */
  readonly statements: readonly Stmt[];
  /** Their verdict, from their rows in order: the caller (none for a 401) and the refusal, if any (401/403). */
  judge(rows: readonly (readonly unknown[] | undefined)[]): { caller?: Caller; refusal?: AppError };
  /** The caller's check as guards at the head of a write batch: judged on the state the batch sees. */
  guards(caller: Caller): CompiledQuery[];
  /** The same, for a batch sent before the caller was judged (a super admin passes every code). */
  openGuards(): CompiledQuery[];
}

/**
 * The one runner of a request's database work (ARCHITECTURE.md: "a request's database work is a
 * value"). A route's handler hands it plans (db/plan.ts); it executes them and nothing else touches
 * the database on the request path:
 * - a read plan goes out with the caller's auth statement at its head while the caller has not been
 *   judged (one D1 batch, one round trip); the auth row is judged BEFORE any row of the plan is
 *   handed out. Where a batch saves nothing (local SQLite) the auth statement runs alone first.
 * - a write plan runs after the caller has been judged (the plan depends on who they are), as one
 *   all-or-nothing batch headed by the caller's check as guards (a session revoked or a code removed
 *   after the judgement refuses the batch whole); a refused batch becomes the client's answer, and
 *   the plan's early checks run only then, to explain it.
 * Every call is timed by the request's meter (Server-Timing) when there is one.
 */
export class Runner {
  /** The token's user and session (0 / '' on a route without authentication): known before the auth row is read. */
  userId = 0;
  sessionId = '';
  /** The caller as the auth row found them, once it was read: also when refused with 403 (the op log names them). */
  known: Caller | undefined;
  private check: CallerCheck | undefined;
  private verdict: Promise<Caller> | undefined;
  /** Where reads go once the caller is judged (a D1 read replica), when the route allows it. */
  private reads: DbPorts;
  private readonly primary: DbPorts;
  private readonly meter: DbMeter | undefined;
  private readonly replica: (() => DbPorts) | undefined;
  private toReplica = false;

  constructor(primary: DbPorts, meter?: DbMeter, replica?: () => DbPorts) {
    this.primary = primary;
    this.reads = primary;
    this.meter = meter;
    this.replica = replica;
  }

  /**
   * A runner over the same database with no caller and no meter: for work a request starts but does
   * not own (a job run now), which runs as the scheduler's would, outside the request's auth guards
   * and its round-trip count.
   */
  detached(): Runner {
    return new Runner(this.primary);
  }

  /** Where a batch of reads is one round trip (D1): worth sending speculative statements together. */
  get oneTrip(): boolean {
    return this.primary.readMany.oneTrip === true;
  }

  /**
   * The caller this request acts for. `replicaReads`: once judged (on the primary), reads go to the
   * replica session (D1 read replication: plain read routes only).
   */
  authenticate(check: CallerCheck, replicaReads = false): void {
    this.check = check;
    this.userId = check.userId;
    this.sessionId = check.sessionId;
    this.toReplica = replicaReads && this.replica !== undefined;
  }

  /** The caller is known to be a super admin (false while the auth row has not been read). */
  get knownSuper(): boolean {
    return this.known?.isSuperAdmin === true && this.verdict !== undefined;
  }

  /** The judged caller: reads the auth row on its own if nothing has carried it yet (401/403 reject). */
  caller(): Promise<Caller> {
    const check = this.check;
    if (!check) return Promise.reject(new Error('Runner.caller(): this route authenticates nobody'));
    const now = this.primary.readNow;
    if (now && this.verdict === undefined) {
      try {
        this.verdict = this.judgeNow(check, now);
      } catch {
        // judgeNow left the refusal as the verdict
      }
    }
    this.verdict ??= this.readAuth(check).then(
      (rows) => this.accept(rows),
      (err: unknown) => {
        this.verdict = undefined; // the database failed, not the caller: the verdict is still owed
        throw err;
      },
    );
    return this.verdict;
  }

  /** The auth statements alone (no plan carried them): one batch where batches are one round trip. */
  private async readAuth(check: CallerCheck): Promise<unknown[][]> {
    const paths = this.primary;
    if (paths.readMany.oneTrip) return this.time(() => paths.readMany(check.statements));
    const out: unknown[][] = [];
    for (const s of check.statements) out.push(await this.time(() => paths.read(s.sql, s.parameters)));
    return out;
  }

  private accept(rows: readonly (readonly unknown[] | undefined)[]): Caller {
    const { caller, refusal } = this.check!.judge(rows);
    this.known = caller;
    if (refusal) throw refusal;
    if (this.toReplica) this.reads = this.replica!();
    return caller!;
  }

  /** Executes a read plan (see the class comment); its `finish` gets the rows of its statements. */
  async read<T>(plan: ReadPlan<T>): Promise<T> {
    const check = this.check;
    // Local SQLite answers at once: the auth row, its verdict and the plan's rows in one turn.
    const now = this.reads.readNow;
    if (now && (!check || this.verdict === undefined)) {
      if (check) this.verdict = this.judgeNow(check, now);
      return plan.finish(this.readRowsNow(now, plan.reads));
    }
    if (check && this.verdict === undefined && this.oneTrip && !this.toReplica) {
      plan.reads.forEach(assertRead);
      const head = check.statements.length;
      const batch = this.time(() => this.primary.readMany([...check.statements, ...plan.reads]));
      this.verdict = batch.then(
        (rows) => this.accept(rows.slice(0, head)),
        (err: unknown) => {
          this.verdict = undefined;
          throw err;
        },
      );
      await this.verdict;
      return plan.finish((await batch).slice(head));
    }
    if (check) await this.caller();
    return plan.finish(now ? this.readRowsNow(now, plan.reads) : await this.readRows(plan.reads));
  }

  /** The rows of one statement (a read plan of one). */
  rows<T>(stmt: Stmt): Promise<T[]> {
    return this.read(rowsOf<T>(stmt));
  }

  /** The first row of one statement, or undefined. */
  first<T>(stmt: Stmt): Promise<T | undefined> {
    return this.read(firstOf<T>(stmt));
  }

  /** The auth row read and judged at once (local SQLite); the verdict as a settled promise, refusals thrown. */
  private judgeNow(check: CallerCheck, now: ReadNow): Promise<Caller> {
    let caller: Caller;
    try {
      caller = this.accept(this.readRowsNow(now, check.statements));
    } catch (err) {
      const refused = Promise.reject(err);
      refused.catch(() => undefined); // held for caller(); thrown here
      this.verdict = refused;
      throw err;
    }
    return Promise.resolve(caller);
  }

  private readRowsNow(now: ReadNow, reads: readonly Stmt[]): unknown[][] {
    const out: unknown[][] = new Array(reads.length);
    for (let i = 0; i < reads.length; i++) {
      const s = reads[i]!;
      out[i] = this.timeNow(() => now(s.sql, s.parameters));
    }
    return out;
  }

  private timeNow<T>(call: () => T): T {
    const meter = this.meter;
    if (!meter) return call();
    const start = meter.begin();
    try {
      return call();
    } finally {
      meter.record(start);
    }
  }

  private async readRows(reads: readonly Stmt[]): Promise<unknown[][]> {
    if (reads.length === 0) return [];
    const paths = this.reads;
    if (paths.readMany.oneTrip) return this.time(() => paths.readMany(reads));
    // Local SQLite: each statement is a call of its own (no round trip to save by batching).
    const out: unknown[][] = [];
    for (const s of reads) out.push(await this.time(() => paths.read(s.sql, s.parameters)));
    return out;
  }

  /** Executes a write plan (see the class comment): the caller judged first, their check at the head of the batch. */
  async write<T>(plan: WritePlan<T>): Promise<T> {
    const check = this.check;
    if (check && this.verdict === undefined && plan.anyCaller && this.oneTrip) return this.writeWithAuth(check, plan);
    const head = check ? check.guards(await this.caller()) : [];
    let results: QueryResult<unknown>[];
    try {
      results = await this.time(() => this.primary.atomic(head.length > 0 ? [...head, ...plan.batch] : plan.batch));
    } catch (err) {
      throw await refusal(err, plan);
    }
    return plan.finish(head.length > 0 ? results.slice(head.length) : results);
  }

  /**
   * A plan that does not depend on who the caller is, sent before they were judged (D1): the auth
   * statement at the head of the batch, the caller's check as guards behind it, then the plan. A
   * batch refused by those guards (or failing anyhow) carries no auth row: the caller is then
   * judged alone, and their verdict outranks the batch's own failure.
   */
  private async writeWithAuth<T>(check: CallerCheck, plan: WritePlan<T>): Promise<T> {
    const auth = check.statements.map((s) => CompiledQuery.raw(s.sql, [...s.parameters]));
    const head = [...auth, ...check.openGuards()];
    let results: QueryResult<unknown>[];
    try {
      results = await this.time(() => this.primary.atomic([...head, ...plan.batch]));
    } catch (err) {
      await this.caller();
      throw await refusal(err, plan);
    }
    this.verdict = Promise.resolve(results.slice(0, auth.length).map((r) => r.rows)).then((rows) => this.accept(rows));
    await this.verdict;
    return plan.finish(results.slice(head.length));
  }

  /**
   * Writes outside the request's plan, unguarded: records of what happened (the op log), which must
   * be written whatever the caller's verdict. Timed like every other call.
   */
  record(batch: readonly CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    return this.time(() => this.primary.atomic(batch));
  }

  private time<T>(call: () => Promise<T>): Promise<T> {
    return this.meter ? this.meter.time(call) : call();
  }
}

/**
 * What travels before the verdict runs before the caller is judged: only plain reads may (a SELECT,
 * or a WITH without a write). A programming error otherwise, refused before anything is sent.
 */
function assertRead(s: Stmt): void {
  const text = s.sql.replace(/^(\s+|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '');
  if (/^SELECT\b/i.test(text) || (/^WITH\b/i.test(text) && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text))) return;
  throw new Error(`only reads may travel before the auth verdict (db/runner.ts): ${s.sql.slice(0, 80)}`);
}

/**
 * The client's answer to a refused write batch: the caller's own verdict found inside it (401/403,
 * which no rule of the write may explain away), else the rule or constraint that refused it, after
 * the plan's early checks had the chance to name the first rule broken.
 */
async function refusal(err: unknown, plan: WritePlan<unknown>): Promise<unknown> {
  const rule = failedGuard(err);
  if (rule === 'session_ended' || rule === 'not_permitted' || rule === 'mfa_required') return new VerdictError(GUARD_RULES[rule].code, GUARD_RULES[rule].message);
  const errors = plan.errors;
  let answer: unknown = err;
  if (rule) answer = new AppError(GUARD_RULES[rule].code, errors?.messages?.[rule] ?? GUARD_RULES[rule].message);
  else if (errors?.unique && isUniqueViolation(err)) answer = conflict(errors.unique);
  else if (errors?.foreignKey && isForeignKeyViolation(err)) answer = await errors.foreignKey();
  // The early checks throw the precise answer of the first rule broken; if none is (the state
  // changed in between), the batch's own answer stands.
  if (plan.explain && answer instanceof AppError && answer.status < 500) await plan.explain(answer);
  return answer;
}
