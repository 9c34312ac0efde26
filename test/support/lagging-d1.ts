import type { D1Database, D1DatabaseSession, D1PreparedStatement, D1Result, D1Value } from '../../src/adapters/workers/bindings.ts';

/**
 * D1 read replication, simulated: `wrangler dev` does not replicate. Two real D1 databases from
 * the tests' workerd pool: the primary, and a replica that only receives the primary's writes when
 * the test calls catchUp(), so it lags exactly as long as a test wants. Sessions behave as D1's:
 * - a write (or a batch holding one) always runs on the primary and moves the session's bookmark
 *   to the primary's new state;
 * - a read runs on the replica when the replica is at least as new as the session's bookmark (any
 *   replica for 'first-unconstrained'), otherwise on the primary (D1 would pick a newer replica or
 *   the primary); 'first-primary' sends the session's first statement to the primary;
 * - the binding itself (no session) is the primary.
 * Bookmarks are the primary's write count as D1-shaped hex (`0000002a-00000000-…`), so they sort
 * like D1's. `served` records where each statement ran, for assertions.
 */
export class LaggingD1 implements D1Database {
  readonly primary: D1Database;
  readonly replica: D1Database;
  /** Writes applied on the primary / on the replica so far. */
  seq = 0;
  replicaSeq = 0;
  private readonly log: { sql: string; values: D1Value[] }[][] = [];
  /** Where each statement ran, in order: `{ on: 'primary' | 'replica', sql }`. */
  readonly served: { on: 'primary' | 'replica'; sql: string }[] = [];

  constructor(primary: D1Database, replica: D1Database) {
    this.primary = primary;
    this.replica = replica;
  }

  static bookmarkOf(seq: number): string {
    return `${seq.toString(16).padStart(8, '0')}-00000000-00000000-${'0'.repeat(32)}`;
  }

  static seqOf(bookmark: string): number | undefined {
    const m = /^([0-9a-f]{8})-/.exec(bookmark);
    return m ? parseInt(m[1]!, 16) : undefined;
  }

  /** Applies the primary's writes the replica has not seen yet (all of them, or up to `to`). */
  async catchUp(to = this.seq): Promise<void> {
    for (; this.replicaSeq < to; this.replicaSeq++) {
      const entry = this.log[this.replicaSeq]!;
      await this.replica.batch(entry.map((s) => this.replica.prepare(s.sql).bind(...s.values)));
    }
  }

  /** The statements that ran on one side, optionally only those matching `re`. */
  on(side: 'primary' | 'replica', re?: RegExp): string[] {
    return this.served.filter((s) => s.on === side && (!re || re.test(s.sql))).map((s) => s.sql);
  }

  prepare(sql: string): D1PreparedStatement {
    return new Statement(this, undefined, sql, []);
  }

  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.run<T>(undefined, statements as Statement[]);
  }

  withSession(constraintOrBookmark: string): D1DatabaseSession {
    return new Session(this, constraintOrBookmark);
  }

  /** Runs statements for a session (or the bare binding: the primary) where D1 would. */
  async run<T>(session: Session | undefined, statements: Statement[]): Promise<D1Result<T>[]> {
    const writes = statements.some((s) => WRITE.test(s.sql));
    let onReplica = false;
    if (!writes && session) {
      const first = session.bookmark === null;
      onReplica = !(first && session.constraint === 'first-primary') && this.replicaSeq >= session.need;
    }
    const db = onReplica ? this.replica : this.primary;
    const results = await db.batch<T>(statements.map((s) => db.prepare(s.sql).bind(...s.values)));
    if (writes) {
      this.log.push(statements.map((s) => ({ sql: s.sql, values: s.values })));
      this.seq++;
    }
    for (const s of statements) this.served.push({ on: onReplica ? 'replica' : 'primary', sql: s.sql });
    session?.saw(onReplica ? this.replicaSeq : this.seq);
    return results;
  }
}

const WRITE = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

class Session implements D1DatabaseSession {
  readonly owner: LaggingD1;
  readonly constraint: string;
  /** The oldest state this session may read. */
  need = 0;
  bookmark: string | null = null;

  constructor(owner: LaggingD1, constraintOrBookmark: string) {
    this.owner = owner;
    this.constraint = constraintOrBookmark;
    if (constraintOrBookmark !== 'first-primary' && constraintOrBookmark !== 'first-unconstrained') {
      const seq = LaggingD1.seqOf(constraintOrBookmark);
      // What D1 does with a bookmark it cannot parse: refuse the query.
      if (seq === undefined) throw new Error(`D1_ERROR: invalid bookmark ${constraintOrBookmark}`);
      this.need = seq;
    }
  }

  saw(seq: number): void {
    if (seq > this.need) this.need = seq;
    this.bookmark = LaggingD1.bookmarkOf(this.need);
  }

  getBookmark(): string | null {
    return this.bookmark;
  }

  prepare(sql: string): D1PreparedStatement {
    return new Statement(this.owner, this, sql, []);
  }

  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.owner.run<T>(this, statements as Statement[]);
  }
}

class Statement implements D1PreparedStatement {
  readonly owner: LaggingD1;
  readonly session: Session | undefined;
  readonly sql: string;
  readonly values: D1Value[];
  constructor(owner: LaggingD1, session: Session | undefined, sql: string, values: D1Value[]) {
    this.owner = owner;
    this.session = session;
    this.sql = sql;
    this.values = values;
  }
  bind(...values: D1Value[]): D1PreparedStatement {
    return new Statement(this.owner, this.session, this.sql, values);
  }
  async all<T>(): Promise<D1Result<T>> {
    return (await this.owner.run<T>(this.session, [this]))[0]!;
  }
  run<T>(): Promise<D1Result<T>> {
    return this.all<T>();
  }
}
