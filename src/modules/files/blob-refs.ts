import { sql } from 'kysely';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import type { BlobStore, Ports } from '../../core/ports.ts';
import type { Budget } from '../maintenance/index.ts';
import { unavailable } from '../../core/errors.ts';

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
 * the sweep removes a blob unreferenced for the whole grace period. Within one process a per-key
 * lock orders them; across processes or Workers isolates (no shared lock) the row orders them
 * (migration 0011_ops_b): the sweep CLAIMS the row (removing_at) before it deletes the bytes and
 * deletes the row after; an upload first RESERVES the row (reserved_at, refused while the row is
 * claimed), then writes the bytes, then records the file. Bytes are therefore deleted only while
 * their row is claimed, no upload can reserve a claimed row, and a sweep never claims a reserved
 * one — whichever statement D1 runs first, the blob an upload references exists.
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

/** A sweep's mark on the rows it is removing: its time (stale claims are taken over) and a nonce. */
const claimOf = (now: number) => `${new Date(now).toISOString()} ${crypto.randomUUID()}`;

/**
 * Deletes the stored bytes of `key` unless a `blobs` row (a new reference or an upload's
 * reservation) exists: it inserts a claimed row first, as the due sweep claims one, so an upload
 * of the same bytes waits until the bytes and the claim are gone. 3 statements and store calls.
 */
async function deleteBlobIfUnreferenced(run: Runner, store: BlobStore, key: string, now: number): Promise<boolean> {
  return withBlobLock(store, key, async () => {
    const at = new Date(now).toISOString();
    const claim = claimOf(now);
    const [claimed] = await run.write(
      resultsOf([
        qb
          .insertInto('blobs')
          .values({ sha256: key, size: 0, ref_count: 0, created_at: at, unreferenced_at: at, removing_at: claim })
          .onConflict((oc) => oc.column('sha256').doNothing())
          .returning('sha256')
          .compile(),
      ]),
    );
    if (!claimed?.rows.length) return false;
    await store.delete(key);
    await run.write(resultsOf([qb.deleteFrom('blobs').where('sha256', '=', key).where('removing_at', '=', claim).compile()]));
    return true;
  });
}

const HOUR = 3_600_000;
/** How long a reservation keeps the sweep off a row: far above an upload's put + insert. */
const RESERVATION_MS = HOUR;
/**
 * A claim older than this belongs to a sweep that died between its statements (a Workers
 * invocation cannot outlive 15 minutes): the next sweep takes it over and finishes the removal.
 */
const STALE_CLAIM_MS = HOUR;
/** Pauses of an upload waiting for a sweep to finish removing the same content (~3 s in all). */
const CLAIM_WAITS_MS = [25, 50, 100, 200, 400, 800, 1600];

/**
 * Reserves the `blobs` row of `key` (inserting it unreferenced when new), so no sweep claims it
 * from now on, then writes the bytes with `commit`. While a sweep holds the row it waits for the
 * row to go (the bytes are deleted by then, and `commit` writes them again), at most ~3 s, then
 * refuses with 503. The caller records its file (ref_count + 1) after this returns.
 */
export async function reserveAndCommit(deps: Ports, run: Runner, key: string, size: number, commit: () => Promise<void>): Promise<void> {
  const now = new Date(deps.clock.now()).toISOString();
  const statement = qb
    .insertInto('blobs')
    .values({ sha256: key, size, ref_count: 0, created_at: now, unreferenced_at: now, reserved_at: now })
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ reserved_at: now }).where('blobs.removing_at', 'is', null))
    .returning('sha256')
    .compile();
  // The same whoever uploads: on an upload's first database call the caller's auth statement
  // travels in this batch (one round trip).
  const reserve = async () => (await run.write(resultsOf([statement], { anyCaller: true })))[0]?.rows[0];
  for (const [i, pause] of [0, ...CLAIM_WAITS_MS].entries()) {
    if (pause) await new Promise((ok) => setTimeout(ok, pause));
    if (await reserve()) return commit();
    if (i === 0) deps.log.log('info', 'upload waits for the blob sweep removing the same content', { sha256: key });
  }
  throw unavailable(5, 'The same content is being removed by the storage sweep: try again in a few seconds');
}
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
export async function cleanupBlobs(deps: Ports, run: Runner, budget: Budget): Promise<{ counts: Record<string, number>; more: boolean }> {
  const store = deps.blobs;
  if (!store) return { counts: {}, more: false };
  const now = deps.clock.now();
  const grace = deps.config.BLOB_GRACE_HOURS * HOUR;
  const expired = new Date(now - grace).toISOString();
  let more = false;

  const reservedBefore = new Date(now - RESERVATION_MS).toISOString();
  const claimedBefore = new Date(now - STALE_CLAIM_MS).toISOString();
  let unreferenced = 0;
  // The select, then one claim, one store call and one delete for all of them: 4 of the budget.
  const dueLimit = budget.limit - budget.used >= 4 ? DUE_PER_RUN : 0;
  const due =
    dueLimit > 0 && budget.take()
      ? await run.rows<{ sha256: string }>(
          qb
          .selectFrom('blobs')
          .select('sha256')
          .where('ref_count', '=', 0)
          .where('unreferenced_at', '<', expired)
          // The claim's own conditions: rows it would skip (reserved by an upload, claimed by a live
          // sweep) must not fill the LIMIT, or a hundred of them would stop every later sweep.
          .where((eb) => eb.or([eb('reserved_at', 'is', null), eb('reserved_at', '<', reservedBefore)]))
          .where((eb) => eb.or([eb('removing_at', 'is', null), eb('removing_at', '<', claimedBefore)]))
          .limit(dueLimit)
          .compile(),
        )
      : [];
  if (due.length === dueLimit) more = true;
  // The due rows are claimed in ONE statement (re-checked in it: an upload may have revived or
  // reserved a row since the select), their content goes in ONE multi-key store call, then the
  // claimed rows in ONE delete; under the per-key locks of all of them (see the top of the file).
  const keys = due.map((d) => d.sha256).sort();
  if (keys.length > 0 && budget.take(3)) {
    const list = (keys: string[]) => sql<string>`(SELECT value FROM json_each(${JSON.stringify(keys)}))`;
    const claim = claimOf(now);
    unreferenced = await withBlobLocks(store, keys, async () => {
      const [updated] = await run.write(resultsOf([sql<{ sha256: string }>`UPDATE blobs SET removing_at = ${claim} WHERE sha256 IN ${list(keys)}
        AND ref_count = 0 AND unreferenced_at < ${expired}
        AND (reserved_at IS NULL OR reserved_at < ${reservedBefore})
        AND (removing_at IS NULL OR removing_at < ${claimedBefore})
        AND NOT EXISTS (SELECT 1 FROM files WHERE files.sha256 = blobs.sha256)
        RETURNING sha256`.compile(qb)]));
      const rows = (updated?.rows ?? []) as { sha256: string }[];
      if (rows.length === 0) return 0;
      const claimed = rows.map((r) => r.sha256);
      await store.deleteMany(claimed);
      await run.write(resultsOf([sql`DELETE FROM blobs WHERE sha256 IN ${list(claimed)} AND removing_at = ${claim}`.compile(qb)]));
      return claimed.length;
    });
  } else if (keys.length > 0) more = true;

  // Orphans: reading and saving the cursor take 2 calls; each check 1, each removal 3.
  let orphans = 0;
  let staging = 0;
  if (budget.take(2)) {
    const saved = await run.first<{ position: string }>(qb.selectFrom('maintenance_cursors').select('position').where('name', '=', ORPHAN_CURSOR).compile());
    let position = saved?.position ?? '';
    let batch: string[] = [];
    let finished = true;
    let listed = 0;
    /** Checks `batch` and removes its orphans; false when the budget ran out (position stays before the batch). */
    const flush = async (): Promise<boolean> => {
      if (!batch.length) return true;
      if (!budget.take()) return false;
      const known = new Set((await run.rows<{ sha256: string }>(qb.selectFrom('blobs').select('sha256').where('sha256', 'in', batch).compile())).map((r) => r.sha256));
      for (const key of batch) {
        if (!known.has(key)) {
          if (!budget.take(3)) return false;
          if (await deleteBlobIfUnreferenced(run, store, key, now)) orphans++;
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
    await run.write(resultsOf([qb
      .insertInto('maintenance_cursors')
      .values({ name: ORPHAN_CURSOR, position: finished ? '' : position, updated_at: new Date(now).toISOString() })
      .onConflict((oc) => oc.column('name').doUpdateSet((eb) => ({ position: eb.ref('excluded.position'), updated_at: eb.ref('excluded.updated_at') })))
      .compile()]));
  } else more = true;
  if (budget.take()) staging = await store.purgeStaging(now - HOUR);
  return { counts: { blobsUnreferenced: unreferenced, blobsOrphaned: orphans, blobsStaging: staging }, more };
}
