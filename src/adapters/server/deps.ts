import type { Config } from '../../config.ts';
import type { ClientFacts, Deps } from '../../deps.ts';
import { createKeys } from '../../core/keys.ts';
import { jsonLogger } from '../../core/log.ts';
import { randomIds, readEach, systemClock } from '../../core/ports.ts';
import { nodeArgon2Hasher } from './argon2.ts';
import { diskBlobStore } from './disk-blobs.ts';
import type { SqliteBinding } from './sqlite-binding.ts';
import { classifyServerError } from './storage.ts';
import { serverRuntimeStats } from './runtime-stats.ts';

export interface ServerDepsInput {
  config: Config;
  /** An opened database's ports, from any SQLite binding (bun:sqlite, node:sqlite). */
  sqlite: Pick<SqliteBinding, 'db' | 'atomic' | 'read' | 'readNow'>;
  /** The secret the purpose-bound keys derive from (JWT_SECRET, or the one kept beside the database). */
  secret: Uint8Array;
  /** The runtime's socket address (and location, if it knows one). */
  client: ClientFacts;
}

/**
 * The Deps of a server runtime (Bun, Node, Deno): argon2 through @node-rs, blobs on disk under
 * FILES_DIR, the real clock and ids, JSON logs at LOG_LEVEL. `more` replaces any of them (tests pin
 * the clock, a cheaper hasher, a scratch blob folder) or adds the server-only ports (lifecycle,
 * storage). The one place server deps are assembled: the start-up and the test app use it.
 */
export function serverDeps({ config, sqlite, secret, client }: ServerDepsInput, more: Partial<Deps> = {}): Deps {
  return {
    config,
    db: sqlite.db,
    atomic: sqlite.atomic,
    read: sqlite.read,
    readMany: readEach(sqlite.read),
    ...(sqlite.readNow ? { readNow: sqlite.readNow } : {}),
    clock: systemClock,
    ids: randomIds,
    keys: createKeys(secret),
    client,
    classifyError: classifyServerError,
    runtimeStats: serverRuntimeStats,
    ...more,
    hasher: more.hasher ?? nodeArgon2Hasher(),
    blobs: 'blobs' in more ? more.blobs : diskBlobStore(config.FILES_DIR),
    log: more.log ?? jsonLogger(config.LOG_LEVEL),
  };
}
