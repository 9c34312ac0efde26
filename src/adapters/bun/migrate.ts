import type { Database } from 'bun:sqlite';
import { migrate as migrateSql } from '../server/migrate';
import { bunSqlExec } from './sqlite';

export { MIGRATIONS_DIR } from '../server/migrate';

/** The portable migrator over a bun:sqlite handle (tests and tools that hold one). */
export function migrate(sqlite: Database, dir?: string): string[] {
  return migrateSql(bunSqlExec(sqlite), dir);
}
