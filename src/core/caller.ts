/**
 * The caller of a request, as the auth row judged them (access/auth-statement.ts): the user and
 * session from the verified token, the rest from the database, read on every request. Before the
 * auth row is read only the token's user id is known (Runner.userId): reads state what they need
 * of the caller in SQL with that id as a value, so their statements can travel with the auth row.
 */
export interface Caller {
  userId: number;
  sessionId: string;
  loginName: string;
  isSuperAdmin: boolean;
  /** Set when the request came with an API key (the caller is then the key's owner): the key. */
  apiKey?: { id: number; name: string };
  /**
   * Holds an enabled mfaRequired role and has no active second factor: the session may only enrol
   * one (and read getLoginUserInformation, log out); absent otherwise.
   */
  mfaPending?: boolean;
}
