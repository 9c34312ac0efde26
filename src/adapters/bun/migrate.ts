import type { Database } from 'bun:sqlite';
import { migrate as migrateSql } from '../server/migrate.ts';
import { bunSqlExec } from './sqlite.ts';

export { MIGRATIONS_DIR } from '../server/migrate.ts';

/** The portable migrator over a bun:sqlite handle (tests and tools that hold one). */
export function migrate(sqlite: Database, dir?: string): string[] {
  return migrateSql(bunSqlExec(sqlite), dir);
}
