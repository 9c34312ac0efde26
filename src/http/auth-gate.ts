import { CompiledQuery, Kysely, type KyselyProps, type QueryResult } from 'kysely';
import { VerdictError } from '../core/errors.ts';
import { failedGuard, GUARD_RULES } from '../db/guards.ts';
import { statementKind } from '../db/statements.ts';
import type { AuthUser } from '../core/caller.ts';
import type { ReadMany, ReadStatement } from '../core/ports.ts';
import type { Database } from '../db/schema.ts';
import type { Deps } from '../deps.ts';

/**
 * Deferred authentication for plain-read routes: the auth statement (session live, user enabled,
 * super admin?, holds the route's code?) is not sent on its own but in front of the handler's
 * first readMany, in the same D1 batch, so a guarded read costs one round trip instead of two.
 * The auth row still decides: `judge` runs on it BEFORE any row of the batch is handed to the
 * handler, and throws the 401/403 the caller would have got up front. Any other database path
 * (Kysely, atomic, a read while the batch is in flight) waits for the verdict first. Where a
 * batch saves nothing (servers: readMany is read one by one) the auth statement runs alone
 * first, exactly as without the gate. Services keep data scope inside their statements (the
 * data-scope fragments take the token's user id as an SQL value), so what the batch read never
 * depends on knowing `isSuperAdmin` in advance.
 *
 * Deferred auth for WRITES (routes declared with `deferAuth`, see http/guard.ts) uses the same gate
 * plus `writeGuards`: the caller's check as guard statements (session live, user enabled, holds the
 * code). Every write of the request goes through `atomic`, which puts them at the head of its batch,
 * so the pre-read may travel with the auth statement (one round trip) and the write still cannot
 * happen for a session revoked or a permission removed in between: the batch fails whole with the
 * 401/403 (VerdictError). A write batch sent before the auth statement carries it in front too.
 */
export class AuthGate {
  private verdict: Promise<void> | undefined;
  private readonly statement: ReadStatement;
  private readonly judge: (row: unknown) => void;
  private readonly deps: Deps;
  private readonly writeGuards: () => CompiledQuery[];

  constructor(deps: Deps, statement: ReadStatement, judge: (row: unknown) => void, writeGuards: () => CompiledQuery[] = () => []) {
    this.deps = deps;
    this.statement = statement;
    this.judge = judge;
    this.writeGuards = writeGuards;
  }

  /** Whether the auth statement has been sent (its verdict may still be on the way). */
  get sent(): boolean {
    return this.verdict !== undefined;
  }

  /** The verdict, reading the auth row alone if no batch has carried it yet. */
  settle(): Promise<void> {
    return (this.verdict ??= this.deps.read(this.statement.sql, this.statement.parameters).then((rows) => this.judge(rows[0])));
  }

  /** readMany with the auth statement in front, while it has not gone out; the rows only after the verdict. */
  async readMany(statements: readonly ReadStatement[]): Promise<unknown[][]> {
    if (this.verdict || !this.deps.readMany.oneTrip) {
      await this.settle();
      return this.deps.readMany(statements);
    }
    statements.forEach(assertRead);
    const batch = this.deps.readMany([this.statement, ...statements]);
    this.verdict = batch.then(
      ([authRows]) => this.judge(authRows?.[0]),
      (err: unknown) => {
        // The batch failed (not the caller): the verdict is still owed, on its own.
        this.verdict = undefined;
        throw err;
      },
    );
    await this.verdict;
    return (await batch).slice(1);
  }

  /**
   * deps.atomic behind the gate, for writes: the write guards at the head of the batch (a failure
   * answers 401/403 and changes nothing); while the auth statement has not gone out, it travels in
   * front of them, in the same batch (D1: one round trip for auth and write).
   */
  async atomic(queries: readonly CompiledQuery[]): Promise<QueryResult<unknown>[]> {
    const guards = this.writeGuards();
    if (this.verdict || !this.deps.readMany.oneTrip) {
      await this.settle();
      try {
        return (await this.deps.atomic([...guards, ...queries])).slice(guards.length);
      } catch (err) {
        throw verdictOf(err) ?? err;
      }
    }
    const batch = this.deps.atomic([CompiledQuery.raw(this.statement.sql, [...this.statement.parameters]), ...guards, ...queries]);
    this.verdict = batch.then(
      ([auth]) => this.judge(auth?.rows[0]),
      (err: unknown) => {
        // The batch failed whole: the auth row is lost with it, the verdict is still owed.
        this.verdict = undefined;
        throw err;
      },
    );
    try {
      await this.verdict;
    } catch (err) {
      const verdict = verdictOf(err);
      if (!verdict) throw err;
      // Refused by a write guard: read the auth row alone (a refusal path only), so the answer is
      // the auth statement's own (and an op-log row names the caller), else the guard's.
      await this.settle();
      throw verdict;
    }
    return (await batch).slice(1 + guards.length);
  }
}

/**
 * What travels before the verdict runs before the caller is judged: only plain reads may (a SELECT,
 * or a WITH without a write). A programming error otherwise, refused before anything is sent.
 */
function assertRead(s: ReadStatement): void {
  const text = s.sql.replace(/^(\s+|--[^\n]*\n|\/\*[\s\S]*?\*\/)*/, '');
  if (/^SELECT\b/i.test(text) || (/^WITH\b/i.test(text) && !/\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(text))) return;
  throw new Error(`only reads may travel before the auth verdict (http/auth-gate.ts): ${s.sql.slice(0, 80)}`);
}

/** The 401/403 of a write guard that refused the batch, or undefined for any other failure. */
function verdictOf(err: unknown): VerdictError | undefined {
  const rule = failedGuard(err);
  if (rule !== 'session_ended' && rule !== 'not_permitted') return undefined;
  return new VerdictError(GUARD_RULES[rule].code, GUARD_RULES[rule].message);
}

const NOT_YET = (field: string) =>
  new Error(`auth.${field} was read before the request's auth statement ran: await authSettled(auth) first (see http/auth-gate.ts)`);

/** The caller while the gate is open: id and session from the verified token, the rest from the auth row. */
export class PendingAuthUser implements AuthUser {
  readonly userId: number;
  readonly sessionId: string;
  private row: { loginName: string; isSuperAdmin: boolean } | undefined;
  private gate: AuthGate | undefined;

  constructor(userId: number, sessionId: string) {
    this.userId = userId;
    this.sessionId = sessionId;
  }
  attach(gate: AuthGate): void {
    this.gate = gate;
  }
  /** The auth row accepted the caller. */
  learn(loginName: string, isSuperAdmin: boolean): void {
    this.row = { loginName, isSuperAdmin };
  }
  get pending(): boolean {
    return this.row === undefined;
  }
  get loginName(): string {
    if (!this.row) throw NOT_YET('loginName');
    return this.row.loginName;
  }
  get isSuperAdmin(): boolean {
    if (!this.row) throw NOT_YET('isSuperAdmin');
    return this.row.isSuperAdmin;
  }
  settle(): Promise<void> {
    return this.gate ? this.gate.settle() : Promise.resolve();
  }
  /** The gate the request's database paths wait behind (deferred auth for writes swaps deps late). */
  get authGate(): AuthGate | undefined {
    return this.gate;
  }
}

// Kysely over another Kysely's executor: only queries are run through it (no introspection,
// transactions or destroy, which is what these would serve).
const UNUSED = Object.freeze({}) as never;

/**
 * The same Kysely behind the gate. A read (SELECT) sent while the auth statement has not gone out
 * yet rides in the auth batch (AuthGate.readMany: one round trip for both, on D1); every other
 * query, and every query once the auth statement is on its way, waits for the verdict first.
 * Where a batch saves nothing (servers) every query simply waits for the verdict, as before.
 */
function gatedKysely(db: Kysely<Database>, gate: AuthGate, oneTrip: boolean, writes: boolean): Kysely<Database> {
  const exec = db.getExecutor();
  const run = async (query: CompiledQuery): Promise<QueryResult<any>> => {
    const read = statementKind(query) === 'read';
    if (oneTrip && !gate.sent && read) return { rows: (await gate.readMany([query]))[0] ?? [] };
    // A write of a deferred-auth write route: in a batch headed by the write guards.
    if (writes && !read) return (await gate.atomic([query]))[0]!;
    await gate.settle();
    return exec.provideConnection((connection) => connection.executeQuery(query));
  };
  const executor = exec.withConnectionProvider({
    // A connection is only taken once the query is known (see run).
    provideConnection: async (consumer) =>
      consumer({
        executeQuery: run,
        streamQuery: () => {
          throw new Error('streamed queries are not used on gated (plain-read) routes');
        },
      }),
  });
  const props: KyselyProps = { config: UNUSED, driver: UNUSED, dialect: UNUSED, executor };
  return new Kysely<Database>(props);
}

/**
 * `deps` with every database path behind the gate (see AuthGate); the rest unchanged. With `writes`
 * (deferred auth for writes), every write goes through AuthGate.atomic (headed by the write guards).
 */
export function gatedDeps(deps: Deps, gate: AuthGate, writes = false): Deps {
  let db: Kysely<Database> | undefined;
  const readMany: ReadMany = Object.assign((statements: readonly ReadStatement[]) => gate.readMany(statements), {
    oneTrip: deps.readMany.oneTrip ?? false,
  });
  // Own descriptors, not a spread: a spread would run lazy getters (the metered Kysely).
  const out = Object.defineProperties({} as Deps, Object.getOwnPropertyDescriptors(deps));
  return Object.defineProperties(out, {
    // Behind the gate every path is the gate's: no way around it to another session.
    afterAuth: { value: undefined, enumerable: true },
    replication: { value: undefined, enumerable: true },
    db: { get: () => (db ??= gatedKysely(deps.db, gate, deps.readMany.oneTrip ?? false, writes)), enumerable: true },
    readMany: { value: readMany, enumerable: true },
    read: {
      value: async (sql: string, params: readonly unknown[]) => {
        if (!gate.sent) return (await gate.readMany([{ sql, parameters: params }]))[0];
        await gate.settle();
        return deps.read(sql, params);
      },
      enumerable: true,
    },
    atomic: {
      value: async (queries: Parameters<Deps['atomic']>[0]) => {
        if (writes) return gate.atomic(queries);
        await gate.settle();
        return deps.atomic(queries);
      },
      enumerable: true,
    },
  });
}
