import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import type { BlobStore } from '../../core/ports.ts';
import type { Budget } from '../maintenance/budget.ts';

/*
 * Reference counting between the `blobs` table and the blob store. The invariant is "never a row
 * without its blob": an upload writes the blob before its rows, and content is removed only by the
 * sweep, after its row. Deleting a record never removes content: the row stays at ref_count 0 with
 * `unreferenced_at`, and `sweepBlobs` removes row and content once that is older than
 * BLOB_GRACE_HOURS. So a backup (snapshot the database, then copy the blobs it references) finds
 * every blob as long as it finishes within the grace period, and an upload of identical content
 * racing a delete revives the row instead of losing its bytes.
 *
 * The sweep and an upload meet on one content key only when identical bytes arrive at the moment
 * the sweep removes a blob unreferenced for the whole grace period; a per-key lock orders
 * "commit blob + insert rows" against "remove row + delete blob" within one server process. (On
 * Workers, with many isolates, the residue of that race is a row whose blob was removed in the
 * same millisecond, which needs an identical upload at the instant of the sweep.)
 */

const locks = new WeakMap<BlobStore, Map<string, Promise<unknown>>>();

/** Runs `fn` while holding the per-key lock of `store`. */
export async function withBlobLock<T>(store: BlobStore, key: string, fn: () => Promise<T>): Promise<T> {
  let byKey = locks.get(store);
  if (!byKey) locks.set(store, (byKey = new Map()));
  const previous = byKey.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  byKey.set(key, settled);
  try {
    return await run;
  } finally {
    if (byKey.get(key) === settled) byKey.delete(key);
  }
}

/** Runs `fn` holding the per-key locks of every key (taken in sorted order, so two callers cannot deadlock). */
function withBlobLocks<T>(store: BlobStore, keys: readonly string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  return sorted.reduceRight<() => Promise<T>>((inner, key) => () => withBlobLock(store, key, inner), fn)();
}

/** Deletes the stored bytes of `key` unless a `blobs` row (a new reference) appeared meanwhile. */
async function deleteBlobIfUnreferenced(deps: Deps, store: BlobStore, key: string): Promise<boolean> {
  return withBlobLock(store, key, async () => {
    const row = await deps.db.selectFrom('blobs').select('sha256').where('sha256', '=', key).executeTakeFirst();
    if (row) return false;
    await store.delete(key);
    return true;
  });
}

const HOUR = 3_600_000;
/** Unreferenced blob rows removed per run at most. */
const DUE_PER_RUN = 100;
/** Stored keys compared with the blobs table per statement (D1 binds at most 100 parameters). */
const ORPHAN_CHECK = 100;
const ORPHAN_CURSOR = 'blob_orphans';

/**
 * The blob sweep (run by the scheduled cleanup, within its budget): blob rows unreferenced for
 * longer than BLOB_GRACE_HOURS go with their content; stored blobs without a row that are older than
 * the grace period too (a crash between writing a blob and its rows); temporary files of
 * interrupted uploads older than an hour. The store is walked in key order from where the previous
 * run stopped (maintenance_cursors), so no run lists the whole bucket; after the last key the next
 * run starts over.
 */
export async function cleanupBlobs(deps: Deps, budget: Budget): Promise<{ counts: Record<string, number>; more: boolean }> {
  const store = deps.blobs;
  if (!store) return { counts: {}, more: false };
  const { db } = deps;
  const now = deps.clock.now();
  const grace = deps.config.BLOB_GRACE_HOURS * HOUR;
  const expired = new Date(now - grace).toISOString();
  let more = false;

  let unreferenced = 0;
  // The select, then one delete statement and one store call for all of them: 3 of the budget.
  const dueLimit = budget.limit - budget.used >= 3 ? DUE_PER_RUN : 0;
  const due =
    dueLimit > 0 && budget.take()
      ? await db.selectFrom('blobs').select('sha256').where('ref_count', '=', 0).where('unreferenced_at', '<', expired).limit(dueLimit).execute()
      : [];
  if (due.length === dueLimit) more = true;
  // The due rows go in ONE statement (re-checked in it: an upload may have revived a row since the
  // select) and their content in ONE multi-key store call, under the per-key locks of all of them.
  const keys = due.map((d) => d.sha256).sort();
  if (keys.length > 0 && budget.take(2)) {
    const list = sql<string>`(SELECT value FROM json_each(${JSON.stringify(keys)}))`;
    unreferenced = await withBlobLocks(store, keys, async () => {
      const { rows } = await sql<{ sha256: string }>`DELETE FROM blobs WHERE sha256 IN ${list} AND ref_count = 0
        AND unreferenced_at < ${expired} AND NOT EXISTS (SELECT 1 FROM files WHERE files.sha256 = blobs.sha256)
        RETURNING sha256`.execute(db);
      if (rows.length > 0) await store.deleteMany(rows.map((r) => r.sha256));
      return rows.length;
    });
  } else if (keys.length > 0) more = true;

  // Orphans: reading and saving the cursor take 2 calls; each check 1, each removal 2.
  let orphans = 0;
  let staging = 0;
  if (budget.take(2)) {
    const saved = await db.selectFrom('maintenance_cursors').select('position').where('name', '=', ORPHAN_CURSOR).executeTakeFirst();
    let position = saved?.position ?? '';
    let batch: string[] = [];
    let finished = true;
    let listed = 0;
    /** Checks `batch` and removes its orphans; false when the budget ran out (position stays before the batch). */
    const flush = async (): Promise<boolean> => {
      if (!batch.length) return true;
      if (!budget.take()) return false;
      const known = new Set((await db.selectFrom('blobs').select('sha256').where('sha256', 'in', batch).execute()).map((r) => r.sha256));
      for (const key of batch) {
        if (!known.has(key)) {
          if (!budget.take(2)) return false;
          if (await deleteBlobIfUnreferenced(deps, store, key)) orphans++;
        }
        position = key;
      }
      batch = [];
      return true;
    };
    for await (const { key, modifiedAt } of store.list(position)) {
      // A listing call per 1000 keys (R2's page size) counts against the budget too.
      if (listed++ % 1000 === 0 && !budget.take()) {
        finished = false;
        break;
      }
      // Too young to judge (its rows may be on their way); when the run stops it may be listed again.
      if (modifiedAt >= now - grace) {
        if (!batch.length) position = key;
        continue;
      }
      batch.push(key);
      if (batch.length >= ORPHAN_CHECK && !(await flush())) {
        finished = false;
        break;
      }
    }
    if (finished && !(await flush())) finished = false;
    more ||= !finished;
    await db
      .insertInto('maintenance_cursors')
      .values({ name: ORPHAN_CURSOR, position: finished ? '' : position, updated_at: new Date(now).toISOString() })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ position: eb.ref('excluded.position'), updated_at: eb.ref('excluded.updated_at') })))
      .execute();
  } else more = true;
  if (budget.take()) staging = await store.purgeStaging(now - HOUR);
  return { counts: { blobsUnreferenced: unreferenced, blobsOrphaned: orphans, blobsStaging: staging }, more };
}
