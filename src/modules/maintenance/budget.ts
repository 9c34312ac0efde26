/**
 * How many database statements and blob-store calls one cleanup run may make. A Workers invocation
 * allows 1000 subrequests/D1 queries (Paid; 50 on Free), so a run stops well before, records where
 * it stopped, and the next run (cron or timer) continues: the work per run is bounded whatever the
 * table or bucket sizes.
 */
export class Budget {
  used = 0;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  /** Takes `n` calls from the budget; false (taking nothing) when they are not left. */
  take(n = 1): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
  get exhausted(): boolean {
    return this.used >= this.limit;
  }
}

/** Calls per cleanup run: room under the Free plan's 50 would make runs too small to keep up. */
export const RUN_BUDGET = 300;
/** Rows per chunked DELETE: one statement stays short on D1 (no long lock on the primary). */
export const DELETE_CHUNK = 500;
