/**
 * Tables whose rows are DERIVED from others and kept by triggers (the app never writes them).
 * A copy of the whole database (VACUUM INTO backup, restore on Bun) carries them with their
 * triggers and stays right. A replay of rows does not: loading users fires the triggers, so
 * loading these tables' rows as well would count everything twice. A replay (restore --to worker)
 * leaves them out and runs each one's `rebuild` once every other table is loaded.
 */
export const DERIVED_TABLES: Readonly<Record<string, { rebuild: string }>> = {
  // 0010_access_org_user_counts.sql: users per organisation (users page totals under a scope).
  org_user_counts: {
    rebuild: 'DELETE FROM org_user_counts; INSERT INTO org_user_counts (org_id, n) SELECT org_id, count(*) FROM users WHERE org_id IS NOT NULL GROUP BY org_id;',
  },
};
