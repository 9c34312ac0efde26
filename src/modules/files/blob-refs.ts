import { sql } from 'kysely';
import type { Deps } from '../../deps';
import type { BlobStore } from '../../core/ports';

/*
 * Reference counting between the `blobs` table and the blob store. The invariant is "never a row
 * without its blob": an upload writes the blob before its rows, a delete removes rows before the
 * blob. The two meet on one content key when identical bytes are uploaded while the last record
 * holding them is deleted; a per-key lock orders "commit blob + insert rows" against "check no
 * row + delete blob" within one server process, so neither can slip between the other's steps.
 * (On Workers, with many isolates, the residue of that race is at worst a row whose blob was
 * deleted in the same millisecond; the orphan sweep cannot repair that, but it needs two clients
 * racing on identical content at the moment of its last deletion.)
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
export async function deleteBlobIfUnreferenced(deps: Deps, store: BlobStore, key: string): Promise<boolean> {
  return withBlobLock(store, key, async () => {
    const row = await deps.db.selectFrom('blobs').select('sha256').where('sha256', '=', key).executeTakeFirst();
    if (row) return false;
    await store.delete(key);
    return true;
  });
}

const HOUR = 3_600_000;

/**
 * The orphan sweep (run by the scheduled cleanup): blob rows whose count dropped to 0, stored
 * blobs without a row that are older than an hour (a crash between writing the blob and its rows),
 * and temporary files of interrupted uploads older than an hour.
 */
export async function cleanupBlobs(deps: Deps): Promise<Record<string, number>> {
  const store = deps.blobs;
  if (!store) return {};
  const { db } = deps;
  const cutoff = deps.clock.now() - HOUR;
  let unreferenced = 0;
  const zero = await db
    .deleteFrom('blobs')
    .where('ref_count', '=', 0)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('files').select(sql`1`.as('one')).whereRef('files.sha256', '=', 'blobs.sha256'))))
    .returning('sha256')
    .execute();
  for (const { sha256 } of zero) if (await deleteBlobIfUnreferenced(deps, store, sha256)) unreferenced++;

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
    if (modifiedAt >= cutoff) continue;
    batch.push(key);
    if (batch.length >= 100) await flush();
  }
  await flush();
  const staging = await store.purgeStaging(cutoff);
  return { blobsUnreferenced: unreferenced, blobsOrphaned: orphans, blobsStaging: staging };
}
