import { PREFIX_TREE_DEPTH } from './log-counts.ts';
import { CACHE_NAMES } from './versions.ts';

/**
 * Tables whose rows are DERIVED from others and kept by triggers (the app never writes them).
 * A copy of the whole database (VACUUM INTO backup, restore on Bun) carries them with their
 * triggers and stays right. A replay of rows does not: loading users fires the triggers, so
 * loading these tables' rows as well would count everything twice. A replay (restore --to worker)
 * leaves them out and runs each one's `rebuild` once every other table is loaded.
 */
/**
 * A prefix tree of migration 0017 from its log's rows (the same statements as the migration's):
 * every key (the value's first PREFIX_TREE_DEPTH characters) with its own count, the start each pair of keys
 * adjacent in order shares, then each row's n as the sum of `own` over the keys starting with it.
 * A tree kept through deletes may hold starts that no adjacent pair shares any more (harmless);
 * a rebuild holds none, so source and target of a replay compare equal after it.
 */
function treeRebuild(tree: string, log: string, column: string, nocase: boolean): string {
  const collate = nocase ? ' COLLATE NOCASE' : '';
  return `DELETE FROM ${tree};
INSERT INTO ${tree} (status, prefix, n, own)
  SELECT status, substr(${column}, 1, ${PREFIX_TREE_DEPTH})${collate}, 0, count(*) FROM ${log} WHERE ${column} <> '' GROUP BY 1, 2;
INSERT INTO ${tree} (status, prefix, n, own)
  SELECT status, p, 0, 0 FROM (
    SELECT status, substr(prefix, 1, (SELECT coalesce(max(k), 0) FROM prefix_lengths WHERE k <= min(length(prefix), length(prev)) AND substr(prefix, 1, k) = substr(prev, 1, k)${collate})) AS p
    FROM (SELECT status, prefix, lag(prefix) OVER (PARTITION BY status ORDER BY prefix) AS prev FROM ${tree})
    WHERE prev IS NOT NULL)
  WHERE p <> ''
  ON CONFLICT (status, prefix) DO NOTHING;
UPDATE ${tree} SET n = (SELECT sum(own) FROM ${tree} AS c
  WHERE c.status = ${tree}.status AND c.prefix >= ${tree}.prefix AND c.prefix < ${tree}.prefix || CAST(x'F5' AS TEXT));`;
}

export const DERIVED_TABLES: Readonly<Record<string, { rebuild: string }>> = {
  // 0010_access_org_user_counts.sql: users per organisation (users page totals under a scope).
  org_user_counts: {
    rebuild: 'DELETE FROM org_user_counts; INSERT INTO org_user_counts (org_id, n) SELECT org_id, count(*) FROM users WHERE org_id IS NOT NULL GROUP BY org_id;',
  },
  // 0017_log_prefix_trees.sql: exact totals of a name or address prefix.
  login_log_name_tree: { rebuild: treeRebuild('login_log_name_tree', 'login_log', 'login_name', true) },
  login_log_ip_tree: { rebuild: treeRebuild('login_log_ip_tree', 'login_log', 'ip', false) },
  op_log_name_tree: { rebuild: treeRebuild('op_log_name_tree', 'op_log', 'operator_name', true) },
  // 0018_cache_versions.sql: what caches of processes and isolates trust. A replay must never leave
  // a version an isolate may already hold for other rows (restoring into a live D1): a new one far
  // above any counter (milliseconds since the epoch, plus a random part).
  cache_versions: {
    rebuild: `DELETE FROM cache_versions; INSERT INTO cache_versions (name, n) SELECT value, CAST(strftime('%s', 'now') AS INTEGER) * 1000 + abs(random() % 1000)
  FROM json_each('${JSON.stringify(CACHE_NAMES)}');`,
  },
};
