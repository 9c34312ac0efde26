import { describe, expect, test } from 'bun:test';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import {
  passkeyAuthenticationOptions,
  passkeyRegistrationOptions,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
  type RelyingParty,
  type StoredPasskey,
} from '../src/modules/mfa/webauthn.ts';
import { FLAG_AT, FLAG_UP, FLAG_UV, SoftAuthenticator } from './support/soft-authenticator.ts';

// Passkeys as a second factor: the wrapper's ceremonies against a software authenticator, and each
// way an answer can be wrong refused for that reason (the reason is checked, so a refusal for some
// incidental fault cannot pass for the one under test).
const RP: RelyingParty = { id: 'admin.example.com', name: 'Edge Admin', origins: ['https://admin.example.com'] };
const ORIGIN = RP.origins[0]!;
const USER = { id: 42, loginName: 'alice' };

async function registered(): Promise<{ auth: SoftAuthenticator; passkey: StoredPasskey }> {
  const auth = await SoftAuthenticator.create();
  const options = await passkeyRegistrationOptions(RP, USER, []);
  const r = await verifyPasskeyRegistration(RP, await auth.register(options, ORIGIN), options.challenge);
  if (!r.ok) throw new Error(`registration failed: ${r.reason}`);
  return { auth, passkey: r.value };
}

const flip = (b64: string, byte: number) => {
  const b = isoBase64URL.toBuffer(b64);
  b[byte < 0 ? b.byteLength + byte : byte]! ^= 0x01;
  return isoBase64URL.fromBuffer(b);
};

describe('passkey registration', () => {
  test('options: attestation none, our RP, a stable user handle, ES256 offered, 5 minutes, UV discouraged', async () => {
    const o = await passkeyRegistrationOptions(RP, USER, []);
    expect(o.attestation).toBe('none');
    expect(o.rp).toEqual({ id: RP.id, name: RP.name });
    expect(o.user.name).toBe('alice');
    expect(o.user.id).toBe(isoBase64URL.fromUTF8String('edge-admin-user:42'));
    expect(o.pubKeyCredParams.map((p) => p.alg)).toEqual([-8, -7, -257]);
    expect(o.timeout).toBe(300_000);
    expect(o.authenticatorSelection).toMatchObject({ userVerification: 'discouraged', residentKey: 'discouraged' });
    expect(isoBase64URL.toBuffer(o.challenge).byteLength).toBeGreaterThanOrEqual(16);
    expect((await passkeyRegistrationOptions(RP, USER, [])).challenge).not.toBe(o.challenge);
  });

  test('a fresh authenticator registers: the stored passkey carries its id, COSE key and counter', async () => {
    const { auth, passkey } = await registered();
    expect(passkey.credentialId).toBe(auth.id);
    expect(passkey.counter).toBe(0);
    expect(passkey.transports).toEqual(['usb']);
    expect(passkey.publicKey.byteLength).toBeGreaterThan(64);
  });

  test('an authenticator already registered is excluded by the options (the browser refuses to create)', async () => {
    const { auth, passkey } = await registered();
    const options = await passkeyRegistrationOptions(RP, USER, [passkey]);
    expect(options.excludeCredentials?.map((c) => c.id)).toEqual([passkey.credentialId]);
    await expect(auth.register(options, ORIGIN)).rejects.toThrow('InvalidStateError');
  });

  const refusals: [string, (o: { challenge: string }) => { origin?: string; tweaks?: Parameters<SoftAuthenticator['register']>[2]; challenge?: string }, RegExp][] = [
    ['another challenge (a replayed or foreign ceremony)', () => ({ challenge: isoBase64URL.fromUTF8String('some-other-challenge') }), /challenge/],
    ['another origin (a phishing page)', () => ({ origin: 'https://admin.example.com.evil.test' }), /origin/],
    ['another RP id in authenticatorData', () => ({ tweaks: { rpId: 'evil.test' } }), /RP ID/],
    ['no user presence', () => ({ tweaks: { flags: FLAG_AT } }), /not present/],
    ['a get() answer offered as create()', () => ({ tweaks: { type: 'webauthn.get' } }), /type/],
  ];
  test.each(refusals)('refused: %s', async (_, make, why) => {
    const auth = await SoftAuthenticator.create();
    const options = await passkeyRegistrationOptions(RP, USER, []);
    const m = make(options);
    const response = await auth.register(options, m.origin ?? ORIGIN, m.tweaks);
    const r = await verifyPasskeyRegistration(RP, response, m.challenge ?? options.challenge);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(why);
  });
});

describe('passkey assertion (second factor at login)', () => {
  test('options allow only the user\'s passkeys, UV discouraged, 5 minutes', async () => {
    const { passkey } = await registered();
    const o = await passkeyAuthenticationOptions(RP, [passkey]);
    expect(o.rpId).toBe(RP.id);
    expect(o.allowCredentials?.map((c) => c.id)).toEqual([passkey.credentialId]);
    expect(o.userVerification).toBe('discouraged');
    expect(o.timeout).toBe(300_000);
  });

  test('verifies, returns the new counter; the next assertion with the stored counter verifies too', async () => {
    const { auth, passkey } = await registered();
    for (const expected of [1, 2, 3]) {
      const o = await passkeyAuthenticationOptions(RP, [passkey]);
      const r = await verifyPasskeyAssertion(RP, await auth.assert(o, ORIGIN), o.challenge, [passkey]);
      expect(r).toEqual({ ok: true, value: { credentialId: passkey.credentialId, newCounter: expected } });
      if (r.ok) passkey.counter = r.value.newCounter;
    }
  });

  test('user verification is accepted but not required', async () => {
    const { auth, passkey } = await registered();
    const o = await passkeyAuthenticationOptions(RP, [passkey]);
    expect((await verifyPasskeyAssertion(RP, await auth.assert(o, ORIGIN, { flags: FLAG_UP | FLAG_UV }), o.challenge, [passkey])).ok).toBe(true);
  });

  type Case = { origin?: string; tweaks?: Parameters<SoftAuthenticator['assert']>[2]; challenge?: string; tamper?: (r: Awaited<ReturnType<SoftAuthenticator['assert']>>) => void; before?: (a: SoftAuthenticator, p: StoredPasskey) => void };
  const refusals: [string, Case, RegExp][] = [
    ['another challenge', { challenge: isoBase64URL.fromUTF8String('some-other-challenge') }, /challenge/],
    ['a stale challenge signed again (the answer carries the old one)', { tweaks: { challenge: isoBase64URL.fromUTF8String('old') } }, /challenge/],
    ['another origin (a phishing page relaying the challenge)', { origin: 'https://admin-example.evil.test' }, /origin/],
    ['another RP id in authenticatorData', { tweaks: { rpId: 'evil.test' } }, /RP ID/],
    ['no user presence', { tweaks: { flags: 0 } }, /not present/],
    ['a create() type', { tweaks: { type: 'webauthn.create' } }, /type/],
    ['counter rollback (a cloned authenticator)', { before: (a, p) => ((p.counter = 5), (a.signCount = 3)) }, /counter value 4 was lower than expected 5/],
    ['counter equal to the stored one', { before: (a, p) => ((p.counter = 5), (a.signCount = 4)) }, /counter value 5 was lower than expected 5/],
    ['a flipped bit in the signature', { tamper: (r) => (r.response.signature = flip(r.response.signature, -1)) }, /signature not verified/],
    ['a flipped flag bit in authenticatorData after signing (UV forged)', { tamper: (r) => (r.response.authenticatorData = flipBit(r.response.authenticatorData, 32, FLAG_UV)) }, /signature not verified/],
    ['clientDataJSON changed after signing', { tamper: (r) => (r.response.clientDataJSON = respaced(r.response.clientDataJSON)) }, /signature not verified/],
    ['an unknown credential id', { tamper: (r) => ((r.id = flip(r.id, 0)), (r.rawId = r.id)) }, /not a passkey of this user/],
    ['id and rawId disagreeing', { tamper: (r) => (r.rawId = flip(r.rawId, 0)) }, /not a passkey of this user/],
  ];
  test.each(refusals)('refused: %s', async (_, c, why) => {
    const { auth, passkey } = await registered();
    c.before?.(auth, passkey);
    const o = await passkeyAuthenticationOptions(RP, [passkey]);
    const response = await auth.assert(o, c.origin ?? ORIGIN, c.tweaks);
    c.tamper?.(response);
    const r = await verifyPasskeyAssertion(RP, response, c.challenge ?? o.challenge, [passkey]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(why);
  });

  test('refused: a signature by another key under this passkey\'s id', async () => {
    const { passkey } = await registered();
    const impostor = await SoftAuthenticator.create();
    Object.defineProperty(impostor, 'credentialId', { value: isoBase64URL.toBuffer(passkey.credentialId) });
    const o = await passkeyAuthenticationOptions(RP, [passkey]);
    const r = await verifyPasskeyAssertion(RP, await impostor.assert(o, ORIGIN), o.challenge, [passkey]);
    expect(r).toEqual({ ok: false, reason: 'signature not verified' });
  });

  test('refused: another user\'s passkey (the list is the user\'s own)', async () => {
    const alice = await registered();
    const bob = await registered();
    const o = await passkeyAuthenticationOptions(RP, [alice.passkey, bob.passkey]);
    const answer = await bob.auth.assert(o, ORIGIN);
    expect((await verifyPasskeyAssertion(RP, answer, o.challenge, [alice.passkey])).ok).toBe(false);
    expect((await verifyPasskeyAssertion(RP, answer, o.challenge, [alice.passkey, bob.passkey])).ok).toBe(true);
  });

  test('authenticators that do not count (0 and 0) pass, as the spec allows', async () => {
    const { auth, passkey } = await registered();
    auth.signCount = -1; // the next assertion signs with 0
    const o = await passkeyAuthenticationOptions(RP, [passkey]);
    const r = await verifyPasskeyAssertion(RP, await auth.assert(o, ORIGIN), o.challenge, [passkey]);
    expect(r).toEqual({ ok: true, value: { credentialId: passkey.credentialId, newCounter: 0 } });
  });
});

/** The same JSON with one more space: every field still right, only the signed bytes differ. */
function respaced(b64: string): string {
  return isoBase64URL.fromUTF8String(isoBase64URL.toUTF8String(b64).replace('"crossOrigin":false', '"crossOrigin": false'));
}

function flipBit(b64: string, byte: number, mask: number): string {
  const b = isoBase64URL.toBuffer(b64);
  b[byte]! ^= mask;
  return isoBase64URL.fromBuffer(b);
}
