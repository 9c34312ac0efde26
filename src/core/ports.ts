import type { CompiledQuery, QueryResult } from 'kysely';

/** Runs several compiled statements all-or-nothing: a transaction on Bun, DB.batch() on D1. */
export type Atomic = (queries: readonly CompiledQuery[]) => Promise<QueryResult<unknown>[]>;

/**
 * One read statement in plain SQL, run through a cached prepared statement. For the few hot
 * paths (authentication, detail reads) where the query builder's per-call cost (~10 µs on Bun)
 * is most of the request; everything else uses Kysely.
 */
export type ReadSql = <T>(sql: string, params: readonly unknown[]) => Promise<T[]>;

/** argon2id over PHC strings, so a hash made by one runtime verifies on the other. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(phc: string, password: string): Promise<boolean>;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export interface Ids {
  uuid(): string;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

/** A blob addressed by its sha256 hex; adapters decide where the bytes live. */
export interface BlobMeta {
  size: number;
}
export interface BlobStore {
  put(key: string, body: ReadableStream<Uint8Array> | Uint8Array, size?: number): Promise<void>;
  get(key: string, range?: { start: number; end: number }): Promise<ReadableStream<Uint8Array> | null>;
  head(key: string): Promise<BlobMeta | null>;
  delete(key: string): Promise<void>;
}
