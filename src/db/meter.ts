/**
 * Database round trips of one request, for the Server-Timing header: the request's runner
 * (db/runner.ts) times each call it makes, nothing is wrapped. Calls in flight at the same time
 * (Promise.all) wait together, so they are one round trip: `trips` counts the sequential waits,
 * `calls` every call, and the time is how long at least one call was in flight. On D1 every call
 * is a network round trip to the primary, so the trips are what latency at the edge is made of.
 * Overlap is decided by the order of start and end events, not by timestamps (workerd's clock only
 * moves on I/O).
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
