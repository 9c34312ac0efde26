import type { Kysely } from 'kysely';
import type { Database } from './db/schema.ts';
import type { ClientFacts, DbPorts, RequestPorts } from './core/ports.ts';

export type { ClientFacts };
import type { Lifecycle } from './core/readiness.ts';

/**
 * One request's database under read replication (D1 Sessions API). Everything runs on `primary`
 * (a session that starts on the primary) unless the request switches to `replica()` after its
 * auth check passed; `bookmark()` is what the client should send back next time.
 */
export interface ReplicaSessions {
  /** Auth, writes, login, logout, captcha: the newest state. */
  primary: DbPorts;
  /** The reads after the auth check: a replica at least as new as the client's bookmark (opened on first use). */
  replica(): DbPorts;
  /** The newest bookmark this request may hand out, or undefined (nothing ran and none came in). */
  bookmark(): string | undefined;
}

/**
 * Everything the app needs from the outside, chosen once by an entry point: the services' ports,
 * the database paths a request's runner uses, and what only the wiring knows. For entries and
 * app.ts: services take Ports (core/ports.ts) and their database work goes through a Runner.
 */
export interface Deps extends RequestPorts, DbPorts {
  /** The database for what only the entries run (the migrator, the start-up checks, restore). */
  db: Kysely<Database>;
  /** Server only: starting / ready / stopping, for readiness and for refusing work while stopping. */
  lifecycle?: Lifecycle;
  /**
   * Workers with D1_READ_REPLICATION only: opens a request's sessions from the client's bookmark
   * (already validated; undefined: none). Absent: one database, no bookmarks (Bun, replication off).
   */
  replication?: (bookmark: string | undefined) => ReplicaSessions;
}
