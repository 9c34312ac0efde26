import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { Integer, Sequence } from 'asn1js';

/**
 * A software WebAuthn authenticator plus the browser's part of the ceremony, for tests: one ES256
 * (P-256) key pair made with Web Crypto, attestation 'none', authenticatorData with rpIdHash,
 * flags and a signature counter, clientDataJSON, CBOR through @simplewebauthn's own helper and the
 * DER signature through asn1js. Runtime-agnostic (Web Crypto only), so the same file runs the
 * ceremony on Bun, Deno, Node and workerd.
 *
 * Like a real one it refuses options that exclude it or do not allow it, and options without
 * ES256. Unlike a browser it does not check that `origin` belongs to the RP id: a test plays the
 * phishing page by passing another origin, and the SERVER must refuse it.
 */
export const FLAG_UP = 0x01; // user present
export const FLAG_UV = 0x04; // user verified
export const FLAG_AT = 0x40; // attested credential data follows

const COSE_ES256 = -7;
const enc = new TextEncoder();
const b64url = (b: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(b));

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as BufferSource));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.byteLength) - p.byteLength);
  return out;
}

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n);
  return b;
}

/** Web Crypto's ECDSA signature is r‖s (IEEE P1363); WebAuthn wants ASN.1 DER. */
function derSignature(raw: Uint8Array): Uint8Array {
  const hex = (b: Uint8Array) => BigInt(`0x${[...b].map((x) => x.toString(16).padStart(2, '0')).join('')}`);
  const seq = new Sequence({ value: [Integer.fromBigInt(hex(raw.slice(0, 32))), Integer.fromBigInt(hex(raw.slice(32)))] });
  return new Uint8Array(seq.toBER(false));
}

export interface CeremonyTweaks {
  /** authenticatorData flags instead of the usual ones (UP, plus AT when registering). */
  flags?: number;
  /** RP id hashed into authenticatorData instead of the one in the options. */
  rpId?: string;
  /** clientDataJSON.type instead of webauthn.create / webauthn.get. */
  type?: string;
  /** clientDataJSON.challenge instead of the one in the options. */
  challenge?: string;
}

export class SoftAuthenticator {
  /** The next assertion signs with signCount + 1; set it lower to play a cloned authenticator. */
  signCount = 0;

  readonly credentialId: Uint8Array;
  private readonly keys: CryptoKeyPair;
  private readonly aaguid: Uint8Array;

  private constructor(credentialId: Uint8Array, keys: CryptoKeyPair, aaguid: Uint8Array) {
    this.credentialId = credentialId;
    this.keys = keys;
    this.aaguid = aaguid;
  }

  static async create(options: { aaguid?: Uint8Array } = {}): Promise<SoftAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    return new SoftAuthenticator(crypto.getRandomValues(new Uint8Array(32)), keys, options.aaguid ?? new Uint8Array(16));
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  /** The PublicKeyCredential around a response, as the browser's toJSON() gives it. */
  private credential<R>(response: R) {
    return { id: this.id, rawId: this.id, type: 'public-key' as const, authenticatorAttachment: 'cross-platform' as const, clientExtensionResults: {}, response };
  }

  private clientData(type: string, challenge: string, origin: string): Uint8Array {
    return enc.encode(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() answered by this authenticator, as the browser serialises it. */
  async register(options: PublicKeyCredentialCreationOptionsJSON, origin: string, tweaks: CeremonyTweaks = {}): Promise<RegistrationResponseJSON> {
    if (!options.pubKeyCredParams.some((p) => p.alg === COSE_ES256)) throw new Error('NotSupportedError: ES256 not offered');
    if (options.excludeCredentials?.some((c) => c.id === this.id)) throw new Error('InvalidStateError: this authenticator is excluded');
    const rpId = tweaks.rpId ?? options.rp.id ?? new URL(origin).hostname;
    const jwk = await crypto.subtle.exportKey('jwk', this.keys.publicKey);
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, COSE_ES256], // alg
      [-1, 1], // crv: P-256
      [-2, isoBase64URL.toBuffer(jwk.x!)],
      [-3, isoBase64URL.toBuffer(jwk.y!)],
    ]);
    const idLength = new Uint8Array([this.credentialId.byteLength >> 8, this.credentialId.byteLength & 0xff]);
    const authData = concat(
      await sha256(enc.encode(rpId)),
      new Uint8Array([tweaks.flags ?? FLAG_UP | FLAG_AT]),
      u32(this.signCount),
      this.aaguid,
      idLength,
      this.credentialId,
      isoCBOR.encode(coseKey),
    );
    const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, never> | Uint8Array>([['fmt', 'none'], ['attStmt', new Map<string, never>()], ['authData', authData]]));
    const clientDataJSON = this.clientData(tweaks.type ?? 'webauthn.create', tweaks.challenge ?? options.challenge, origin);
    return this.credential({ clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['usb'], publicKeyAlgorithm: COSE_ES256 });
  }

  /** navigator.credentials.get() answered by this authenticator; counts its signature counter up. */
  async assert(options: PublicKeyCredentialRequestOptionsJSON, origin: string, tweaks: CeremonyTweaks = {}): Promise<AuthenticationResponseJSON> {
    const allowed = options.allowCredentials ?? [];
    if (allowed.length > 0 && !allowed.some((c) => c.id === this.id)) throw new Error('NotAllowedError: this authenticator is not allowed');
    const rpId = tweaks.rpId ?? options.rpId ?? new URL(origin).hostname;
    this.signCount += 1;
    const authData = concat(await sha256(enc.encode(rpId)), new Uint8Array([tweaks.flags ?? FLAG_UP]), u32(this.signCount));
    const clientDataJSON = this.clientData(tweaks.type ?? 'webauthn.get', tweaks.challenge ?? options.challenge, origin);
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.keys.privateKey, signed as BufferSource));
    return this.credential({ clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(derSignature(raw)) });
  }
}
