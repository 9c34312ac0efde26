import type { Kysely } from 'kysely';
import type { Config } from './config.ts';
import type { Database } from './db/schema.ts';
import type { AppKeys } from './core/keys.ts';
import type { Atomic, BackupArchives, ReadMany, ReadSql, BlobStore, ClassifyError, Clock, Ids, Logger, PasswordHasher, StorageProbe } from './core/ports.ts';
import type { Lifecycle } from './core/readiness.ts';

/**
 * Request facts only the runtime knows: the socket address and, on Workers, the location. They
 * take the request as the runtime delivered it and the `env` it passed alongside (Bun's server,
 * Workers' bindings), never Hono's Context.
 */
export interface ClientFacts {
  socketAddress(req: Request, env: unknown): string | undefined;
  location?(req: Request, env: unknown): { country: string | null; city: string | null };
}

/** The database paths of Deps, what a D1 session replaces. */
export type DbPaths = Pick<Deps, 'db' | 'atomic' | 'read' | 'readMany'>;

/**
 * One request's database under read replication (D1 Sessions API). Everything runs on `primary`
 * (a session that starts on the primary) unless the request switches to `replica()` after its
 * auth check passed; `bookmark()` is what the client should send back next time.
 */
export interface ReplicaSessions {
  /** Auth, writes, login, logout, captcha: the newest state. */
  primary: DbPaths;
  /** The reads after the auth check: a replica at least as new as the client's bookmark (opened on first use). */
  replica(): DbPaths;
  /** The newest bookmark this request may hand out, or undefined (nothing ran and none came in). */
  bookmark(): string | undefined;
}

/** Everything the app needs from the outside, chosen once by an entry point. */
export interface Deps {
  config: Config;
  db: Kysely<Database>;
  atomic: Atomic;
  /** Cached plain-SQL reads for hot paths (see ReadSql). */
  read: ReadSql;
  /** Several reads in one round trip (see ReadMany). */
  readMany: ReadMany;
  hasher: PasswordHasher;
  blobs?: BlobStore;
  clock: Clock;
  ids: Ids;
  log: Logger;
  client: ClientFacts;
  /** Purpose-bound keys derived from JWT_SECRET (createKeys). */
  keys: AppKeys;
  /** Server only: starting / ready / stopping, for readiness and for refusing work while stopping. */
  lifecycle?: Lifecycle;
  /** Server only: free space and writability of local storage. */
  storage?: StorageProbe;
  /** Maps the runtime's busy/full errors to 503/507 (the error mapper asks it about unknown errors). */
  classifyError?: ClassifyError;
  /** Server only: backup archives (sysBackup answers 501 without them). */
  backups?: BackupArchives;
  /**
   * Workers with D1_READ_REPLICATION only: opens a request's sessions from the client's bookmark
   * (already validated; undefined: none). Absent: one database, no bookmarks (Bun, replication off).
   */
  replication?: (bookmark: string | undefined) => ReplicaSessions;
  /**
   * Set per request by the app when replication is on: the deps for the reads after a passed auth
   * check (the replica session). Absent: the request stays where it is.
   */
  afterAuth?: () => Deps;
}
