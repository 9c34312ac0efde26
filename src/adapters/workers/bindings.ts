/**
 * The few Cloudflare binding shapes the adapters use, declared structurally so the project does
 * not need @cloudflare/workers-types (whose globals clash with the DOM and Bun types).
 */

export type D1Value = string | number | null | ArrayBuffer;

export interface D1Meta {
  changes?: number;
  last_row_id?: number;
  duration?: number;
  rows_read?: number;
  rows_written?: number;
}

export interface D1Result<T = Record<string, unknown>> {
  results: T[];
  success: boolean;
  meta: D1Meta;
}

export interface D1PreparedStatement {
  bind(...values: D1Value[]): D1PreparedStatement;
  all<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  run<T = Record<string, unknown>>(): Promise<D1Result<T>>;
}

export interface D1Database {
  prepare(sql: string): D1PreparedStatement;
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
  /** The Sessions API (read replication): 'first-primary', 'first-unconstrained' or a bookmark. */
  withSession?(constraintOrBookmark: string): D1DatabaseSession;
}

/** A D1 session: its queries are sequentially consistent; getBookmark() is the newest state it saw (null before any query). */
export interface D1DatabaseSession {
  prepare(sql: string): D1PreparedStatement;
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
  getBookmark(): string | null;
}

export interface WorkerExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

export interface ScheduledController {
  scheduledTime: number;
  cron: string;
}

/** `request.cf` as far as the login log needs it. */
export interface CfProperties {
  country?: string;
  city?: string;
}
