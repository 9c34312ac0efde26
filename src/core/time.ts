import type { Clock } from './ports.ts';

/** ISO 8601 UTC text of the clock's now (plus an offset), the format every table stores. */
export function isoNow(clock: Clock, plusMs = 0): string {
  return new Date(clock.now() + plusMs).toISOString();
}
