import type { DbPorts } from '../../core/ports.ts';
import type { ReplicaSessions } from '../../deps.ts';
import type { D1Database, D1DatabaseSession } from './bindings.ts';
import { d1Atomic, d1Read, d1ReadMany } from './d1-dialect.ts';

/** The database paths a request's runner uses (atomic, read, readMany) over one D1 session. */
function pathsOver(session: D1DatabaseSession): DbPorts {
  // A session has prepare/batch like the binding: the adapters take it as a D1Database.
  const d1 = session as D1Database;
  return {
    atomic: d1Atomic(d1),
    read: d1Read(d1),
    readMany: d1ReadMany(d1),
  };
}

/** The newer of two bookmarks (D1 bookmarks sort lexicographically, oldest first). */
const newer = (a: string | undefined, b: string | null | undefined): string | undefined => (b && (!a || b > a) ? b : a);

/**
 * Read replication over D1's Sessions API, one pair of sessions per request:
 * - primary: `withSession('first-primary')`: its first statement (the auth statement, a login's
 *   or a write's first statement) runs on the primary, and D1 keeps every later statement of the
 *   session at least as new (writes always go to the primary);
 * - replica: `withSession(client bookmark ?? 'first-unconstrained')`, opened only when a read
 *   route's auth check has passed: any replica at least as new as the client's last answer.
 * The bookmark handed back is the newest of the client's, the replica session's, and, when the
 * request did not switch to the replica (writes, login, logout), the primary session's: after a
 * write it covers that write, so the next read, on any replica, sees it. A read route's auth
 * statement does not advance it, or every read would demand a replica as new as the primary.
 */
export function d1Replication(d1: D1Database): (bookmark: string | undefined) => ReplicaSessions {
  const open = d1.withSession?.bind(d1);
  if (!open) throw new Error('D1_READ_REPLICATION=true needs a D1 binding with withSession (the Sessions API; compatibility_date 2025-04-01 or later)');
  return (bookmark) => {
    const primarySession = open('first-primary');
    let replicaSession: D1DatabaseSession | undefined;
    let replica: DbPorts | undefined;
    return {
      primary: pathsOver(primarySession),
      replica() {
        replicaSession ??= open(bookmark ?? 'first-unconstrained');
        return (replica ??= pathsOver(replicaSession));
      },
      bookmark() {
        const seen = replicaSession ? replicaSession.getBookmark() : primarySession.getBookmark();
        return newer(bookmark, seen);
      },
    };
  };
}
