import type { SqlExec } from '../adapters/server/sqlite-binding.ts';
import { unknownMigrations } from '../adapters/server/migrate.ts';
import { StartupError } from './startup-errors.ts';

const RESTORE = 'restore it from a backup (npm run restore -- <archive>)';

/** The tables that grow without bound (history, read page by page): skipped by a bounded quick check. */
const LOG_TABLES = ['login_log', 'op_log'];

/**
 * SQLite's own consistency check before the server takes traffic: `quick_check` (every page and
 * index entry is well-formed; O(size), no index cross-check) or `integrity_check` (also every index
 * against its table). Reports at most 10 problems, so a badly broken file fails fast.
 * Bounded: `quick_check` reads the whole file, ~15 s warm and ~50-60 s cold for 1.3 GB on a busy
 * machine (npm run bench -- quickcheck), so above `maxWholeMb` the quick mode checks every table
 * except the two logs (`PRAGMA quick_check(<table>)`: that table and its indexes) and the start-up
 * time stays that of the users, roles, menus, sessions and files, whatever the logs hold. A damaged
 * log page is then met when that page is read (a 500 on that log page, nothing else).
 * Returns the time taken (ms) and what was checked; throws a StartupError naming DATABASE_PATH.
 */
export function checkIntegrity(
  sql: SqlExec,
  mode: 'quick' | 'full' | 'off',
  path: string,
  maxWholeMb = 0,
): { ms: number; scope: 'whole' | 'all but the logs' } | undefined {
  if (mode === 'off' || path === ':memory:') return undefined;
  const started = performance.now();
  const pragma = mode === 'full' ? 'integrity_check' : 'quick_check';
  const bytes = Number(sql.query<{ n: number }>('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()')[0]?.n ?? 0);
  const bounded = mode === 'quick' && maxWholeMb > 0 && bytes > maxWholeMb * 2 ** 20;
  const checks = bounded
    ? sql
        .query<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
        .map((r) => r.name)
        .filter((name) => !LOG_TABLES.includes(name))
        .map((name) => `PRAGMA quick_check("${name.replaceAll('"', '""')}")`)
    : [`PRAGMA ${pragma}(10)`];
  for (const check of checks) {
    const rows = sql.query<Record<string, string>>(check).map((r) => Object.values(r)[0]);
    if (rows.length !== 1 || rows[0] !== 'ok') {
      throw new StartupError(
        `DATABASE_PATH=${path} failed its ${pragma} (${rows.slice(0, 2).join('; ').replace(/\s*\n\s*/g, ' ').slice(0, 300)}): ${RESTORE}; the server does not serve a corrupt database (STARTUP_CHECK=off skips the check)`,
      );
    }
  }
  return { ms: Math.round(performance.now() - started), scope: bounded ? 'all but the logs' : 'whole' };
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
