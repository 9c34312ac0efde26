import { Database } from 'bun:sqlite';
import { Kysely, type CompiledQuery, type QueryResult } from 'kysely';
import { BunSqliteDialect } from 'kysely-bun-sqlite';
import type { Atomic } from '../../core/ports';
import type { Database as Schema } from '../../db/schema';

/** Opens (creating) a SQLite file or ':memory:' with the pragmas the app relies on. */
export function openSqlite(path: string): Database {
  const sqlite = new Database(path, { create: true, strict: true });
  if (path !== ':memory:') sqlite.run('PRAGMA journal_mode = WAL');
  sqlite.run('PRAGMA foreign_keys = ON');
  sqlite.run('PRAGMA busy_timeout = 5000');
  sqlite.run('PRAGMA synchronous = NORMAL');
  return sqlite;
}

/** D1's limit of bound parameters per statement, enforced here too so Bun tests catch what D1 would refuse. */
export const MAX_BOUND_PARAMS = 100;

/**
 * Kysely over bun:sqlite. kysely-bun-sqlite calls `prepare()` for every query; handing it
 * `query()` instead makes bun:sqlite reuse one compiled statement per SQL text, which is
 * most of the per-query cost on the hot path.
 */
export function bunKysely(sqlite: Database): Kysely<Schema> {
  const cached = new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') {
        return (sql: string) => {
          const stmt = target.query(sql);
          if (stmt.paramsCount > MAX_BOUND_PARAMS) {
            throw new Error(`D1 allows at most ${MAX_BOUND_PARAMS} bound parameters per statement, got ${stmt.paramsCount}: ${sql.slice(0, 120)}`);
          }
          return stmt;
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Kysely<Schema>({ dialect: new BunSqliteDialect({ database: cached }) });
}

/** All-or-nothing on Bun: one SQLite transaction around the statements. */
export function bunAtomic(db: Kysely<Schema>): Atomic {
  return (queries: readonly CompiledQuery[]) =>
    db.transaction().execute(async (trx) => {
      const results: QueryResult<unknown>[] = [];
      for (const q of queries) results.push(await trx.executeQuery(q));
      return results;
    });
}
