/**
 * The authenticated caller, as the auth middleware found it on this request. On plain-read routes
 * the auth statement is deferred to the request's first read batch (http/auth-gate.ts): until it
 * has run, `pending` is true, `userId` and `sessionId` (from the verified token) are known, and
 * reading `loginName` or `isSuperAdmin` throws. A service that needs them before its first read
 * awaits authSettled(auth) (one round trip of its own); one that can, states what it reads with
 * the user as an SQL value (data-scope fragments) and lets the auth row travel with it.
 */
export interface AuthUser {
  userId: number;
  loginName: string;
  sessionId: string;
  isSuperAdmin: boolean;
  /** True while the auth row has not been read yet (deferred auth). */
  readonly pending?: boolean;
  /** Reads the auth row now if it has not been read (401/403 reject); see authSettled. */
  settle?(): Promise<void>;
}

/** Resolves once the caller's auth row has been read and accepted; at once when it has been. */
export function authSettled(auth: AuthUser): Promise<void> {
  return auth.pending && auth.settle ? auth.settle() : Promise.resolve();
}

/**
 * The caller is known to be a super admin. False while the auth row is deferred: for reads that
 * skip the data-scope condition for a super admin, the condition (whose `all` covers the
 * superAdmin role) then stays in the statement, which can travel with the auth row.
 */
export function knownSuperAdmin(auth: AuthUser): boolean {
  return !auth.pending && auth.isSuperAdmin;
}
