import type { Stmt } from './plan.ts';

/**
 * Caches of a process (a Worker isolate) kept right by versions (migrations/0018_cache_versions.sql):
 * triggers bump a name's version in the same transaction as every write to what its cache derives
 * from. A request reads the version with its auth statement (the same batch: no extra round trip)
 * and trusts its cache only when the version matches; the statements that read the source rows go
 * in the same batch on the condition (in SQL) that the cache is stale, so a miss costs no round
 * trip either, and a fresh cache costs one index lookup.
 */
/** Every cache name (a row of cache_versions each, bumped by the triggers of its migration). */
export const CACHE_NAMES = ['menus', 'dicts', 'configs'] as const;
export type CacheName = (typeof CACHE_NAMES)[number];

/** The statement that reads `name`'s version (one row, `n`). */
export const versionRead = (name: CacheName): Stmt => ({ sql: `SELECT n FROM cache_versions WHERE name = ?`, parameters: [name] });

/** The version a versionRead answered; undefined when its row is missing (then nothing is cached). */
export const versionOf = (rows: readonly unknown[] | undefined): number | undefined => (rows?.[0] as { n?: number } | undefined)?.n;

/**
 * SQL condition: `name`'s version is not the one bound next (`+?`), or its row is missing (a cache
 * is then never trusted); binds the name, then the version.
 */
export const staleSql = `NOT coalesce((SELECT n FROM cache_versions WHERE name = ?) = +?, 0)`;

/** What a process holds for one version: the source rows and values derived from them per key. */
export interface Snapshot<Rows, Derived> {
  readonly version: number;
  readonly rows: Rows;
  readonly derived: Map<string, Derived>;
}

/**
 * One cache (per app and name): the snapshot of the last version a request read. A request takes
 * the snapshot when it builds its plan and keeps using that one (a concurrent refresh cannot pull
 * its rows away); a request that found another version installs a new snapshot.
 */
export class VersionedCache<Rows, Derived> {
  private current: Snapshot<Rows, Derived> | undefined;
  private readonly maxDerived: number;
  constructor(maxDerived: number) {
    this.maxDerived = maxDerived;
  }

  /** The snapshot held now (undefined: none yet; its version -1 for statements). */
  get held(): Snapshot<Rows, Derived> | undefined {
    return this.current;
  }

  /**
   * The snapshot for `version`: the held one if it is that version, else a new one of `rows` (kept
   * for the next requests unless the version is unknown: its row was missing).
   */
  at(version: number | undefined, held: Snapshot<Rows, Derived> | undefined, rows: Rows): Snapshot<Rows, Derived> {
    if (held && version !== undefined && held.version === version) return held;
    const next = { version: version ?? -1, rows, derived: new Map<string, Derived>() };
    if (version !== undefined) this.current = next;
    return next;
  }

  /** Remembers a derived value in a snapshot (bounded: emptied when full). */
  derive(snapshot: Snapshot<Rows, Derived>, key: string, value: Derived): Derived {
    if (snapshot.derived.size >= this.maxDerived) snapshot.derived.clear();
    snapshot.derived.set(key, value);
    return value;
  }
}
