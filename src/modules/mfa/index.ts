// What other modules (the login flow in auth/, the app) may use of the second factor.
export { mfaRoutes } from './mfa.routes.ts';
export { redactingHook } from './mfa.routes.ts';
export { AuthenticationResponse, RecoveryCode, TotpCode, PasskeyRequestOptions } from './mfa.schemas.ts';
export {
  CHALLENGE_MS,
  challengeId,
  expiresAt,
  factorColumns,
  methodsOf,
  mfaStateQuery,
  passkeysOf,
  randomToken,
  relyingParty,
  storedPasskey,
  totpContext,
  type Method,
  type PasskeyRow,
} from './factors.ts';
export {
  passkeyAuthenticationOptions,
  passkeyRegistrationOptions,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
  type PasskeyResult,
  type PasskeyUser,
  type RelyingParty,
  type StoredPasskey,
  type VerifiedAssertion,
} from './webauthn.ts';
