import type { Kysely } from 'kysely';
import type { Atomic, ReadManyNow, ReadNow, ReadSql } from '../../core/ports.ts';
import type { Database } from '../../db/schema.ts';

/**
 * The two calls the migrator needs. Every SQLite binding has them (bun:sqlite, node:sqlite), so
 * migrations do not depend on one runtime's driver.
 */
export interface SqlExec {
  /** Runs one or more statements with no parameters and no result. */
  exec(sql: string): void;
  /** Runs one statement with positional parameters and returns its rows ([] for a write). */
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): T[];
}

/** One open SQLite database as the server start-up uses it: the app's ports plus migrations. */
export interface SqliteBinding {
  db: Kysely<Database>;
  atomic: Atomic;
  read: ReadSql;
  /** `read` answered at once (the runner's read plans run in one turn). */
  readNow?: ReadNow;
  /** Several reads at once, in one read transaction where that is cheaper (see readManyNow). */
  readManyNow?: ReadManyNow;
  sql: SqlExec;
  close(): void;
}

/**
 * Opens (creating) a database file or ':memory:' with the app's pragmas; one per runtime.
 * `busyTimeoutMs`: how long a statement waits for another connection's lock (SQLITE_BUSY after).
 */
export type OpenSqlite = (path: string, opts: { exclusive: boolean; busyTimeoutMs?: number }) => SqliteBinding;

/**
 * The pragmas every server binding applies on open. `exclusive`: the server process owns the file
 * (SQLite's exclusive locking mode). In WAL mode every read otherwise takes a shared-memory lock:
 * ~2.3 µs per statement here against ~0.5 µs, which is ~10% of a guarded read. The price: no other
 * process (the sqlite3 shell, Litestream, a backup tool) can open the file while the server runs.
 */
export function serverPragmas(path: string, opts: { exclusive?: boolean; busyTimeoutMs?: number }): string[] {
  const file = path !== ':memory:';
  return [
    // First: the switch to WAL below already needs a lock another process may hold.
    `PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`,
    ...(file ? ['PRAGMA journal_mode = WAL'] : []),
    // A checkpoint truncates the -wal file back to 64 MiB at most after a burst of writes.
    'PRAGMA journal_size_limit = 67108864',
    'PRAGMA foreign_keys = ON',
    'PRAGMA synchronous = NORMAL',
    ...(file && opts.exclusive ? ['PRAGMA locking_mode = EXCLUSIVE'] : []),
  ];
}

/**
 * ReadManyNow over a binding's readNow: two or more statements run inside one read transaction, so
 * they see one snapshot and open SQLite's read state once instead of once each. The auth
 * statements and a detail read (`npx bun bench/read-transaction.ts`, five runs): on a shared WAL
 * file (the server's default) 0.52–0.57× the time one by one (~10 µs against ~18); with
 * SQLITE_EXCLUSIVE or on ':memory:', where a statement takes no shared lock, the same within noise
 * (0.8–1.2×). `exec` runs a statement without parameters or rows (cached).
 */
export function readManyNow(readNow: ReadNow, exec: (sql: 'BEGIN' | 'COMMIT' | 'ROLLBACK') => void, inTransaction: () => boolean): ReadManyNow {
  const each = (statements: Parameters<ReadManyNow>[0]) => {
    const out: unknown[][] = new Array(statements.length);
    for (let i = 0; i < statements.length; i++) out[i] = readNow(statements[i]!.sql, statements[i]!.parameters);
    return out;
  };
  return (statements) => {
    // Nothing to share, or already inside a transaction (never on the request path, where every
    // call is synchronous): as they are.
    if (statements.length < 2 || inTransaction()) return each(statements);
    exec('BEGIN');
    try {
      const out = each(statements);
      exec('COMMIT');
      return out;
    } catch (err) {
      if (inTransaction()) exec('ROLLBACK');
      throw err;
    }
  };
}
