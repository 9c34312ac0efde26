// What other modules (the login flow in auth/) may use of the second factor.
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
