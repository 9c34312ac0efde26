import { Kysely, type KyselyProps } from 'kysely';
import type { Deps } from '../deps.ts';
import { readEach } from '../core/ports.ts';

/**
 * Database round trips of one request. Each Kysely query, deps.read and deps.atomic batch is one
 * call to the database; calls in flight at the same time (Promise.all) wait together, so they are
 * one round trip: `trips` counts the sequential waits, `calls` every call, and the time is how
 * long at least one call was in flight. On D1 every call is a network round trip to the primary,
 * so the trips are what latency at the edge is made of. Overlap is decided by the order of start
 * and end events, not by timestamps (workerd's clock only moves on I/O).
 */
export class DbMeter {
  trips = 0;
  calls = 0;
  private busyMs = 0;
  private lastEndMs = 0;
  private tick = 0;
  private lastEndTick = 0;

  /** Marks the start of a call; returns its mark for record(). */
  begin(): { tick: number; ms: number } {
    return { tick: ++this.tick, ms: performance.now() };
  }

  /** One call that began at `start` has answered now. */
  record(start: { tick: number; ms: number }): void {
    const end = performance.now();
    this.calls++;
    // It began after the last call answered: it waited on its own, a new round trip.
    if (start.tick > this.lastEndTick) this.trips++;
    this.lastEndTick = ++this.tick;
    const from = Math.max(start.ms, this.lastEndMs);
    if (end > from) this.busyMs += end - from;
    if (end > this.lastEndMs) this.lastEndMs = end;
  }

  /** The `Server-Timing` entry, e.g. `db;dur=3.1;desc="1 rt"` (`desc="1 rt, 4 calls"` when calls overlapped). */
  header(): string {
    const desc = this.calls === this.trips ? `${this.trips} rt` : `${this.trips} rt, ${this.calls} calls`;
    return `db;dur=${this.busyMs.toFixed(1)};desc="${desc}"`;
  }

  /** Runs one database call under the meter (counted whether it succeeds or throws). */
  async time<T>(call: () => Promise<T>): Promise<T> {
    const start = this.begin();
    try {
      return await call();
    } finally {
      this.record(start);
    }
  }
}

// Kysely over another Kysely's executor: only queries are run through it (as in http/auth-gate.ts).
const UNUSED = Object.freeze({}) as never;

/**
 * The same Kysely with every query counted when it reaches its connection, not when it is compiled:
 * a plugin's transformQuery runs before the query waits for anything (a deferred auth verdict, a
 * connection), so a query that waited for another call looked as if it had overlapped it and its
 * round trip went uncounted. A query that throws is counted too (it was a round trip).
 */
function meteredKysely(db: Deps['db'], meter: DbMeter): Deps['db'] {
  const exec = db.getExecutor();
  const executor = exec.withConnectionProvider({
    provideConnection: (consumer) =>
      exec.provideConnection((connection) =>
        consumer({
          executeQuery: (query) => meter.time(() => connection.executeQuery(query)),
          streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
        }),
      ),
  });
  const props: KyselyProps = { config: UNUSED, driver: UNUSED, dialect: UNUSED, executor };
  return new Kysely(props) as Deps['db'];
}

/** The same deps with every database path (Kysely, read, atomic) counted by `meter`: one per request. */
export function meteredDeps(deps: Deps, meter: DbMeter): Deps {
  let db: Deps['db'] | undefined;
  return {
    ...deps,
    // Built on first use: the hot paths (auth, detail reads) never touch Kysely.
    get db() {
      return (db ??= meteredKysely(deps.db, meter));
    },
    read: (sql, params) => meter.time(() => deps.read(sql, params)),
    // One batch is one call; read one by one (servers), every statement is a call of its own.
    readMany: deps.readMany.oneTrip
      ? Object.assign((statements: Parameters<Deps['readMany']>[0]) => meter.time(() => deps.readMany(statements)), { oneTrip: true })
      : readEach((sql, params) => meter.time(() => deps.read(sql, params))),
    atomic: (queries) => meter.time(() => deps.atomic(queries)),
    // The replica session's calls count on the same meter.
    ...(deps.afterAuth ? { afterAuth: () => meteredDeps(deps.afterAuth!(), meter) } : {}),
  };
}
