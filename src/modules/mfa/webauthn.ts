import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';

/**
 * Passkeys (WebAuthn) as a SECOND factor, over @simplewebauthn/server (Web Crypto only; runs on
 * Bun, Deno, Node and workerd). The relying party (id, origins) is an input, never read from a
 * request header. What a ceremony needs kept between its two steps (the challenge) and what a
 * verified passkey needs stored (id, public key, counter) is the caller's: this file holds no state.
 *
 * Second-factor choices: attestation 'none' (we trust the password plus possession, not a vendor
 * certificate chain); user verification 'discouraged' (the password was the knowledge factor, so
 * no PIN prompt on a security key); no resident key needed (the login name is already known).
 */
export interface RelyingParty {
  /** RP ID: the host name the passkey is bound to (`admin.example.com`), no scheme or port. */
  id: string;
  /** Shown by the browser while registering. */
  name: string;
  /** Every origin a ceremony may come from, `scheme://host[:port]` (the SPA's). */
  origins: string[];
}

/** What the caller stores per passkey. */
export interface StoredPasskey {
  /** base64url credential id, as the browser sends it in `id`. */
  credentialId: string;
  /** COSE public key. */
  publicKey: Uint8Array;
  /** Signature counter last seen; 0 for authenticators that do not count. */
  counter: number;
  transports: string[];
}

export type PasskeyResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** A ceremony's lifetime, the same 5 minutes as the login challenge. */
export const PASSKEY_TIMEOUT_MS = 5 * 60_000;
/** EdDSA, ES256, RS256: fixed, so options do not depend on what the runtime's Web Crypto offers. */
export const PASSKEY_ALGORITHMS = [-8, -7, -257];

const enc = new TextEncoder();
const bytes = (u: Uint8Array) => new Uint8Array(u); // the library wants Uint8Array<ArrayBuffer>

export interface PasskeyUser {
  id: number;
  loginName: string;
  displayName?: string;
}

/** Options for navigator.credentials.create(); keep `challenge` for the verify step. */
export async function passkeyRegistrationOptions(rp: RelyingParty, user: PasskeyUser, existing: Pick<StoredPasskey, 'credentialId' | 'transports'>[]): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.loginName,
    userDisplayName: user.displayName ?? user.loginName,
    // stable per user (an authenticator replaces rather than duplicates), and no personal data
    userID: enc.encode(`edge-admin-user:${user.id}`),
    timeout: PASSKEY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'discouraged', userVerification: 'discouraged' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
}

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** What both ceremonies check the same way: our challenge, one of our origins, our RP id; UV not required. */
const expected = (rp: RelyingParty, expectedChallenge: string) => ({
  expectedChallenge,
  expectedOrigin: rp.origins,
  expectedRPID: rp.id,
  requireUserVerification: false,
});

/** Checks a create() answer against the challenge, origin and RP id; the new passkey to store. */
export async function verifyPasskeyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, expectedChallenge: string): Promise<PasskeyResult<StoredPasskey>> {
  try {
    const r = await verifyRegistrationResponse({ response, ...expected(rp, expectedChallenge), requireUserPresence: true, supportedAlgorithmIDs: PASSKEY_ALGORITHMS });
    if (!r.verified) return { ok: false, reason: 'registration not verified' };
    const c = r.registrationInfo.credential;
    return { ok: true, value: { credentialId: c.id, publicKey: c.publicKey, counter: c.counter, transports: c.transports ?? [] } };
  } catch (e) {
    return { ok: false, reason: reason(e) };
  }
}

/** Options for navigator.credentials.get() limited to the user's passkeys; keep `challenge`. */
export async function passkeyAuthenticationOptions(rp: RelyingParty, passkeys: Pick<StoredPasskey, 'credentialId' | 'transports'>[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
  return generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
    userVerification: 'discouraged',
    timeout: PASSKEY_TIMEOUT_MS,
  });
}

export interface VerifiedAssertion {
  credentialId: string;
  /** Store it: the next assertion must count higher (unless both are 0). */
  newCounter: number;
}

/**
 * Checks a get() answer: one of the user's own passkeys, the challenge, origin and RP id, user
 * presence, the signature, and a counter above the stored one (a lower or equal one means a
 * cloned authenticator, refused).
 */
export async function verifyPasskeyAssertion(rp: RelyingParty, response: AuthenticationResponseJSON, expectedChallenge: string, passkeys: StoredPasskey[]): Promise<PasskeyResult<VerifiedAssertion>> {
  const passkey = passkeys.find((p) => p.credentialId === response.id);
  if (!passkey || response.rawId !== response.id) return { ok: false, reason: 'not a passkey of this user' };
  try {
    const credential = { id: passkey.credentialId, publicKey: bytes(passkey.publicKey), counter: passkey.counter, transports: passkey.transports };
    const r = await verifyAuthenticationResponse({ response, ...expected(rp, expectedChallenge), credential });
    if (!r.verified) return { ok: false, reason: 'signature not verified' };
    return { ok: true, value: { credentialId: passkey.credentialId, newCounter: r.authenticationInfo.newCounter } };
  } catch (e) {
    return { ok: false, reason: reason(e) };
  }
}
