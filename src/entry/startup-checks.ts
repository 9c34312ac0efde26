import type { SqlExec } from '../adapters/server/sqlite-binding.ts';
import { unknownMigrations } from '../adapters/server/migrate.ts';
import { StartupError } from './startup-errors.ts';

const RESTORE = 'restore it from a backup (npm run restore -- <archive>)';

/**
 * SQLite's own consistency check before the server takes traffic: `quick_check` (every page and
 * index entry is well-formed; O(size), no index cross-check) or `integrity_check` (also every index
 * against its table). Reports at most 10 problems, so a badly broken file fails fast. Returns the
 * time taken (ms); throws a StartupError naming DATABASE_PATH on any problem.
 */
export function checkIntegrity(sql: SqlExec, mode: 'quick' | 'full' | 'off', path: string): number | undefined {
  if (mode === 'off' || path === ':memory:') return undefined;
  const started = performance.now();
  const pragma = mode === 'full' ? 'integrity_check' : 'quick_check';
  const rows = sql.query<Record<string, string>>(`PRAGMA ${pragma}(10)`).map((r) => Object.values(r)[0]);
  if (rows.length !== 1 || rows[0] !== 'ok') {
    throw new StartupError(
      `DATABASE_PATH=${path} failed its ${pragma} (${rows.slice(0, 2).join('; ').replace(/\s*\n\s*/g, ' ').slice(0, 300)}): ${RESTORE}; the server does not serve a corrupt database (STARTUP_CHECK=off skips the check)`,
    );
  }
  return Math.round(performance.now() - started);
}

/** Refuses a database that a newer release migrated (applied migrations this release does not have). */
export function refuseUnknownMigrations(sql: SqlExec, path: string, dir?: string) {
  const unknown = unknownMigrations(sql, dir);
  if (unknown.length) {
    throw new StartupError(
      `DATABASE_PATH=${path} was migrated by a newer release (applied migrations this release does not know: ${unknown.join(', ')}): run that release, or ${RESTORE} taken before the upgrade`,
    );
  }
}
