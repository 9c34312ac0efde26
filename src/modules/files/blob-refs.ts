import { sql } from 'kysely';
import type { Deps } from '../../deps';
import type { BlobStore } from '../../core/ports';

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

/**
 * The blob sweep (run by the scheduled cleanup): blob rows unreferenced for longer than
 * BLOB_GRACE_HOURS go with their content; stored blobs without a row that are older than the grace
 * period too (a crash between writing a blob and its rows); temporary files of interrupted uploads
 * older than an hour.
 */
export async function cleanupBlobs(deps: Deps): Promise<Record<string, number>> {
  const store = deps.blobs;
  if (!store) return {};
  const { db } = deps;
  const now = deps.clock.now();
  const grace = deps.config.BLOB_GRACE_HOURS * HOUR;
  const expired = new Date(now - grace).toISOString();
  let unreferenced = 0;
  const due = await db
    .selectFrom('blobs')
    .select('sha256')
    .where('ref_count', '=', 0)
    .where('unreferenced_at', '<', expired)
    .execute();
  for (const { sha256 } of due) {
    const removed = await withBlobLock(store, sha256, async () => {
      // Re-checked in the statement: an upload may have revived the row since the select.
      const gone = await db
        .deleteFrom('blobs')
        .where('sha256', '=', sha256)
        .where('ref_count', '=', 0)
        .where('unreferenced_at', '<', expired)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('files').select(sql`1`.as('one')).where('files.sha256', '=', sha256))))
        .executeTakeFirst();
      if (!gone.numDeletedRows) return false;
      await store.delete(sha256);
      return true;
    });
    if (removed) unreferenced++;
  }

  let orphans = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (!batch.length) return;
    const known = new Set(
      (await db.selectFrom('blobs').select('sha256').where('sha256', 'in', batch).execute()).map((r) => r.sha256),
    );
    for (const key of batch) if (!known.has(key) && (await deleteBlobIfUnreferenced(deps, store, key))) orphans++;
    batch = [];
  };
  for await (const { key, modifiedAt } of store.list()) {
    if (modifiedAt >= now - grace) continue;
    batch.push(key);
    if (batch.length >= 100) await flush();
  }
  await flush();
  const staging = await store.purgeStaging(now - HOUR);
  return { blobsUnreferenced: unreferenced, blobsOrphaned: orphans, blobsStaging: staging };
}
