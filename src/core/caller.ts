/** The authenticated caller, as the auth middleware found it on this request. */
export interface AuthUser {
  userId: number;
  loginName: string;
  sessionId: string;
  isSuperAdmin: boolean;
}
