/**
 * A meeting point for `n` concurrent parties, so a race test really overlaps what it claims to.
 * Nobody passes until all `n` have arrived; if they have not within `ms`, everyone is released and
 * `missed` says so — the test must then FAIL (assert `!missed`) instead of quietly running its
 * steps one after another. Parties beyond the n-th pass straight through.
 */
export function barrier(n: number, ms = 10_000) {
  let arrived = 0;
  let missed = false;
  let release!: () => void;
  const met = new Promise<void>((ok) => (release = ok));
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    async arrive(): Promise<void> {
      arrived++;
      if (arrived === 1 && n > 1) {
        timer = setTimeout(() => {
          missed = true;
          release();
        }, ms);
      }
      if (arrived === n) {
        clearTimeout(timer);
        release();
      }
      await met;
    },
    /** True when the n parties never were all in flight at once. */
    get missed() {
      return missed || arrived < n;
    },
    get arrived() {
      return arrived;
    },
  };
}

/** Counts how many calls of an async function are in flight at once (the peak). */
export function concurrency() {
  let now = 0;
  let peak = 0;
  return {
    async around<T>(f: () => Promise<T>): Promise<T> {
      now++;
      peak = Math.max(peak, now);
      try {
        return await f();
      } finally {
        now--;
      }
    },
    get peak() {
      return peak;
    },
  };
}
