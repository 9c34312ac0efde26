import { expect } from 'bun:test';
import type { Stmt } from '../../src/db/plan.ts';
import type { AnyTestApp } from './app.ts';

/** A successful call's data (fails the test with the answer's message otherwise). */
export async function okData(t: AnyTestApp, method: 'GET' | 'POST', path: string, token: string, body?: unknown) {
  const r = await t.call(method, path, { token, body });
  expect(`${method} ${path} → ${r.status} ${r.status === 200 ? '' : r.json.msg}`).toBe(`${method} ${path} → 200 `);
  return r.data;
}

/**
 * Calls `note` with every statement a request's runner reads through the ports (readNow,
 * readManyNow, read, readMany: whichever the runtime has) and its rows.
 */
export function observeReads(t: AnyTestApp, note: (stmts: readonly Stmt[], rows: unknown[][]) => void) {
  const d = t.deps;
  const readNow = d.readNow;
  if (readNow) d.readNow = <T>(q: string, p: readonly unknown[]) => ((r) => (note([{ sql: q, parameters: p }], [r]), r))(readNow<T>(q, p));
  const readManyNow = d.readManyNow;
  if (readManyNow) d.readManyNow = (stmts) => ((rows) => (note(stmts, rows), rows))(readManyNow(stmts));
  const read = d.read;
  d.read = async <T>(q: string, p: readonly unknown[]) => ((r) => (note([{ sql: q, parameters: p }], [r]), r))(await read<T>(q, p));
  const readMany = d.readMany;
  d.readMany = Object.assign(async (stmts: readonly Stmt[]) => ((rows) => (note(stmts, rows), rows))(await readMany(stmts)), { oneTrip: readMany.oneTrip });
}

/**
 * Counts the rows read by statements whose SQL matches `pattern`, on either runtime (the ports a
 * request's runner reads through): how a test tells a cache hit (0 rows of the source read) from
 * a miss. `take()` returns the count since the last take and resets it.
 */
export function rowsReadBy(t: AnyTestApp, pattern: RegExp) {
  let n = 0;
  observeReads(t, (stmts, rows) => stmts.forEach((s, i) => pattern.test(s.sql) && (n += rows[i]?.length ?? 0)));
  return {
    take() {
      const out = n;
      n = 0;
      return out;
    },
  };
}

/** The D1 round trips a response's Server-Timing header counted. */
export const roundTrips = (res: Response) => Number(res.headers.get('server-timing')?.match(/db;dur=[\d.]+;desc="(\d+) rt/)?.[1] ?? NaN);
