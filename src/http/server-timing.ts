import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Deps } from '../deps';

/**
 * Database round trips of one request: how many calls went to the database (each Kysely query,
 * each deps.read, each deps.atomic batch is one) and for how long at least one was in flight.
 * On D1 every call is a network round trip, so the count is what latency at the edge is made of.
 */
export class DbMeter {
  trips = 0;
  private busyMs = 0;
  private lastEnd = 0;

  /** One call that ran from `start` to `end` (performance.now()); overlapping calls count once in the time. */
  record(start: number, end: number): void {
    this.trips++;
    const from = Math.max(start, this.lastEnd);
    if (end > from) this.busyMs += end - from;
    if (end > this.lastEnd) this.lastEnd = end;
  }

  /** The `Server-Timing` entry, e.g. `db;dur=3.1;desc="1 rt"`. */
  header(): string {
    return `db;dur=${this.busyMs.toFixed(1)};desc="${this.trips} rt"`;
  }

  /** Runs one database call under the meter (counted whether it succeeds or throws). */
  async time<T>(call: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await call();
    } finally {
      this.record(start, performance.now());
    }
  }
}

/**
 * Counts executed Kysely queries. transformQuery also runs for queries that are only compiled
 * (for deps.atomic, counted there), so it just notes the time; transformResult runs only once a
 * query has answered. A query that throws is not counted (the request fails anyway).
 */
class MeterPlugin implements KyselyPlugin {
  private readonly started = new WeakMap<object, number>();
  private readonly meter: DbMeter;
  constructor(meter: DbMeter) {
    this.meter = meter;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.started.set(args.queryId, performance.now());
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const end = performance.now();
    this.meter.record(this.started.get(args.queryId) ?? end, end);
    return args.result;
  }
}

/** The same deps with every database path (Kysely, read, atomic) counted by `meter`: one per request. */
export function meteredDeps(deps: Deps, meter: DbMeter): Deps {
  let db: Deps['db'] | undefined;
  return {
    ...deps,
    // Built on first use: the hot paths (auth, detail reads) never touch Kysely.
    get db() {
      return (db ??= deps.db.withPlugin(new MeterPlugin(meter)));
    },
    read: (sql, params) => meter.time(() => deps.read(sql, params)),
    atomic: (queries) => meter.time(() => deps.atomic(queries)),
  };
}
