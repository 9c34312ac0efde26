import { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { Database } from '../../db/schema.ts';
import { createKeys } from '../../core/keys.ts';
import { jsonLogger } from '../../core/log.ts';
import { randomIds, systemClock } from '../../core/ports.ts';
import { wasmArgon2Hasher } from './argon2-wasm.ts';
import type { D1Database } from './bindings.ts';
import { workersClient } from './client.ts';
import { D1Dialect, d1Atomic, d1Read, d1ReadMany } from './d1-dialect.ts';
import { classifyWorkersError } from './d1-errors.ts';
import { d1Replication } from './d1-replicas.ts';
import { r2BlobStore, type R2BucketLike } from './r2-blobs.ts';

export interface WorkersDepsInput {
  config: Config;
  /** The D1 binding. */
  d1: D1Database;
  /** The R2 binding; without it file and image routes answer 500. */
  files?: R2BucketLike | undefined;
  /** The secret the purpose-bound keys derive from (JWT_SECRET: required on Workers). */
  secret: string;
}

/**
 * The Deps of a Worker: Kysely over the D1 dialect, batch-based atomic, WASM argon2id, R2 blobs,
 * CF-Connecting-IP and the `cf` location, the real clock and ids, D1's full/overloaded errors as 507/503. `more` replaces any of them
 * (tests). The one place Workers deps are assembled: the Worker entry and the D1 test app use it.
 */
export function workersDeps({ config, d1, files, secret }: WorkersDepsInput, more: Partial<Deps> = {}): Deps {
  return {
    config,
    db: new Kysely<Database>({ dialect: new D1Dialect(d1) }),
    atomic: d1Atomic(d1),
    read: d1Read(d1),
    readMany: d1ReadMany(d1),
    clock: systemClock,
    ids: randomIds,
    keys: createKeys(new TextEncoder().encode(secret)),
    client: workersClient,
    classifyError: classifyWorkersError,
    // Off (the default): every statement on the binding, i.e. the primary, and no bookmarks.
    ...(config.D1_READ_REPLICATION ? { replication: d1Replication(d1) } : {}),
    ...more,
    hasher: more.hasher ?? wasmArgon2Hasher(),
    blobs: 'blobs' in more ? more.blobs : files ? r2BlobStore(files) : undefined,
    log: more.log ?? jsonLogger(config.LOG_LEVEL),
  };
}
