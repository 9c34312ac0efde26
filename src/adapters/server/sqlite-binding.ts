import type { Kysely } from 'kysely';
import type { Atomic, ReadSql } from '../../core/ports';
import type { Database } from '../../db/schema';

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
  sql: SqlExec;
  close(): void;
}

/** Opens (creating) a database file or ':memory:' with the app's pragmas; one per runtime. */
export type OpenSqlite = (path: string, opts: { exclusive: boolean }) => SqliteBinding;
