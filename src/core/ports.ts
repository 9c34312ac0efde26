import type { CompiledQuery, QueryResult } from 'kysely';
import type { Config } from '../config.ts';
import type { AppKeys } from './keys.ts';

/**
 * Runs several compiled statements all-or-nothing: a transaction on Bun, DB.batch() on D1. One
 * result per statement, in order, the same on every adapter:
 * - `rows`: what a SELECT or a write with RETURNING produced; [] for other writes;
 * - `numAffectedRows`: for every INSERT, UPDATE and DELETE (with RETURNING too), the rows it
 *   changed (SQLite's changes(): not those of triggers or cascades); absent for reads;
 * - `insertId`: for every INSERT, SQLite's last_insert_rowid() after it (meaningful only when it
 *   inserted a row); absent otherwise.
 * What a statement is comes from statementKind (db/statements.ts).
 */
export type Atomic = (queries: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/** The largest number of bound parameters one statement may carry: D1's limit, enforced on every adapter. */
export const MAX_BOUND_PARAMS = 100;

/**
 * One read statement in plain SQL, run through a cached prepared statement. For the few hot
 * paths (authentication, detail reads) where the query builder's per-call cost (~10 µs on Bun)
 * is most of the request; everything else uses Kysely.
 */
export type ReadSql = <T>(sql: string, params: readonly unknown[]) => Promise<T[]>;

/** One read statement for ReadMany (a Kysely CompiledQuery fits). */
export interface ReadStatement {
  sql: string;
  parameters: readonly unknown[];
}

/**
 * Several read statements in ONE round trip, the rows of each in order: one `DB.batch()` on D1
 * (`oneTrip`), one by one through ReadSql's cached statements where a call costs no network hop
 * (local SQLite). A request's runner (db/runner.ts) puts the caller's auth statement in front of
 * the first read plan of a request, so auth and data travel together on D1.
 */
export interface ReadMany {
  (statements: readonly ReadStatement[]): Promise<unknown[][]>;
  /** The statements travel together (D1); absent: each is its own call, so batching saves nothing. */
  readonly oneTrip?: boolean;
}

/** ReadMany over ReadSql, one statement after the other (servers: local SQLite, no round trips). */
export function readEach(read: ReadSql): ReadMany {
  return async (statements) => {
    const out: unknown[][] = [];
    for (const s of statements) out.push(await read(s.sql, s.parameters));
    return out;
  };
}

/** ReadSql answered at once, where the database is in the process (local SQLite): no promise hop per statement. */
export type ReadNow = <T>(sql: string, params: readonly unknown[]) => T[];

/** The database paths a request's runner (db/runner.ts) executes its plans on. */
export interface DbPorts {
  read: ReadSql;
  readMany: ReadMany;
  atomic: Atomic;
  /** Servers only (local SQLite): `read` without the promise, so a read plan runs in one turn. */
  readNow?: ReadNow;
}

/** argon2id over PHC strings, so a hash made by one runtime verifies on the other. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(phc: string, password: string): Promise<boolean>;
  /** A constant PHC string with this hasher's parameters that nothing verifies against (dummyPhc). */
  readonly dummy?: string;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export interface Ids {
  uuid(): string;
}

/** The real clock and ids, what every runtime's deps use unless a test pins them. */
export const systemClock: Clock = { now: () => Date.now() };
export const randomIds: Ids = { uuid: () => crypto.randomUUID() };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

/** Bytes `offset` .. `offset + length - 1` of a blob. */
export interface ByteRange {
  offset: number;
  length: number;
}

/** What the caller knows of a stream's size before reading it (from Content-Length). */
export interface StageHint {
  /** The stream carries at least this many bytes (a stream that ends sooner is refused). */
  atLeast?: number;
  /**
   * The stream carries at most this many bytes (a longer one is refused): with it a store that
   * needs a length up front (R2) can stream instead of holding the bytes.
   */
  atMost?: number;
  /**
   * Awaited before the store writes anything outside memory (a temporary file, an R2 part); a
   * rejection refuses the stage with nothing written. Uploads pass the caller's auth check here:
   * under deferred auth it would otherwise run only at the first database call, after the body.
   */
  beforeWrite?: () => Promise<void>;
}

/** A stream that has been written to temporary storage but has no content key yet. */
export interface StagedBlob {
  /** Bytes written. */
  size: number;
  /** Makes the bytes readable under `key` (the sha256 hex). A no-op if `key` already exists. */
  commit(key: string): Promise<void>;
  /** Removes the temporary copy; safe to call after commit and more than once. */
  discard(): Promise<void>;
}

/**
 * Content-addressed blob storage (key = sha256 hex of the bytes; never a client-supplied name).
 * Uploads are staged first because the key is only known once the whole stream has been hashed.
 */
export interface BlobStore {
  /** Streams `body` into temporary storage; on any stream error nothing is left behind. */
  stage(body: ReadableStream<Uint8Array>, hint?: StageHint): Promise<StagedBlob>;
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  head(key: string): Promise<{ size: number } | null>;
  delete(key: string): Promise<void>;
  /** Removes several keys (missing ones are fine): one call where the store takes a list (R2: up to 1000 keys). */
  deleteMany(keys: readonly string[]): Promise<void>;
  /**
   * Committed keys with their write time (ms), in ascending key order, starting after `after`
   * (all when omitted), so the orphan sweep can stop anywhere and resume there on its next run.
   */
  list(after?: string): AsyncIterable<{ key: string; modifiedAt: number }>;
  /** Removes temporary objects of uploads interrupted before `before` (ms); returns how many. */
  purgeStaging(before: number): Promise<number>;
}

/** What a storage failure means to a client: the database is busy beyond its wait (503) or storage is full (507). */
export type StorageFailure = 'busy' | 'full';

/** Recognises a driver's or filesystem's raw error as a StorageFailure; each adapter knows its own errors. */
export type ClassifyError = (err: unknown) => StorageFailure | undefined;

/** Local storage facts a server has and a Worker does not: for readiness and upload pre-checks. */
export interface StorageProbe {
  /** Free bytes on the fullest filesystem holding the database or the files. */
  freeBytes(): Promise<number>;
  /** Writes, syncs and removes a small file in file storage; throws if it cannot. */
  checkWritable(): Promise<void>;
}

/** What a backup archive says about itself (manifest.json, the archive's last member). */
export interface BackupManifest {
  format: 'edge-admin-backup';
  formatVersion: number;
  createdAt: string;
  /** Applied migrations of the snapshot, in order. */
  migrations: string[];
  rowCounts: Record<string, number>;
  /** Every other member with its size and sha256. */
  members: { path: string; size: number; sha256: string }[];
}

/** Backup archives of a server install (absent on Workers, where D1 Time Travel does the job). */
export interface BackupArchives {
  /** A consistent snapshot of the database plus every blob it references, as one archive `name`. */
  create(name: string, createdAt: string): Promise<{ size: number; sha256: string; manifest: BackupManifest }>;
  open(name: string): Promise<{ body: ReadableStream<Uint8Array>; size: number } | null>;
  remove(name: string): Promise<void>;
}

/**
 * What the app's services need from the outside, chosen once by an entry point (the full wiring,
 * with the database and the runtime's request facts, is Deps in src/deps.ts, for entries and app.ts
 * only). No database here: a request's database work goes through its runner (db/runner.ts), and
 * work outside a request (maintenance, backups, the first admin) through a runner of its own over
 * DbPorts.
 */
export interface Ports {
  config: Config;
  hasher: PasswordHasher;
  blobs?: BlobStore;
  clock: Clock;
  ids: Ids;
  log: Logger;
  /** Purpose-bound keys derived from JWT_SECRET (createKeys). */
  keys: AppKeys;
  /** Server only: free space and writability of local storage. */
  storage?: StorageProbe;
  /** Maps the runtime's busy/full errors to 503/507 (the error mapper asks it about unknown errors). */
  classifyError?: ClassifyError;
  /** Server only: backup archives (sysBackup answers 501 without them). */
  backups?: BackupArchives;
  /** Server only: the process's own figures (the RuoYi dialect's server monitor page shows them). */
  runtimeStats?: () => RuntimeStats;
}

/** What a server process knows about itself; every figure optional (runtimes differ). */
export interface RuntimeStats {
  runtime: string;
  platform?: string;
  arch?: string;
  hostname?: string;
  cwd?: string;
  cpus?: number;
  /** Load average over the last minute, when the system reports one. */
  load1?: number;
  memTotal?: number;
  memFree?: number;
  rss?: number;
  heapUsed?: number;
  heapTotal?: number;
  uptimeSec?: number;
  startedAt?: number;
}

/**
 * Request facts only the runtime knows: the socket address and, on Workers, the location. They
 * take the request as the runtime delivered it and the `env` it passed alongside (Bun's server,
 * Workers' bindings), never Hono's Context.
 */
export interface ClientFacts {
  socketAddress(req: Request, env: unknown): string | undefined;
  location?(req: Request, env: unknown): { country: string | null; city: string | null };
}

/** Ports plus the runtime's request facts: what the HTTP layer needs. */
export interface RequestPorts extends Ports {
  client: ClientFacts;
}
