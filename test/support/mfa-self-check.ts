import { createKeys } from '../../src/core/keys.ts';
import { qrSvgDataUrl } from '../../src/core/qr.ts';
import { generateRecoveryCodes, hashRecoveryCode } from '../../src/core/recovery-codes.ts';
import { openSecret, sealSecret } from '../../src/core/secret-box.ts';
import { otpauthUri, totpAt, verifyTotp } from '../../src/core/totp.ts';
import { passkeyAuthenticationOptions, passkeyRegistrationOptions, verifyPasskeyAssertion, verifyPasskeyRegistration, type RelyingParty } from '../../src/modules/mfa/webauthn.ts';
import { SoftAuthenticator } from './soft-authenticator.ts';

/**
 * Every second-factor piece once, with a known answer per check, in code that imports no runtime:
 * test/mfa-runtimes.test.ts runs it under Bun, Node, Deno and workerd and expects every value
 * true. Each check is a comparison with a fixed expectation, so a runtime that computes something
 * else (or throws) shows up as false (or as the error text) under its name.
 */
export async function mfaSelfCheck(): Promise<Record<string, boolean | string>> {
  const out: Record<string, boolean | string> = {};
  const check = async (name: string, fn: () => Promise<boolean | string> | boolean | string) => {
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = `threw: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`;
    }
  };
  const enc = new TextEncoder();
  const rfc = enc.encode('12345678901234567890');
  const keys = createKeys(enc.encode('self-check-secret-self-check-secret-01'));

  await check('totp RFC 6238 vector', async () => (await totpAt(rfc, 20000000000 * 1000, 8)) === '65353130');
  await check('totp verify + replay refused', async () => {
    const now = 1_750_000_015_000;
    const step = await verifyTotp(rfc, await totpAt(rfc, now), now);
    return step !== null && (await verifyTotp(rfc, await totpAt(rfc, now), now, step)) === null;
  });
  await check('secret box round trip, other context refused', async () => {
    const box = await sealSecret(await keys.mfa(), rfc, 'totp:user:1');
    const back = await openSecret(await keys.mfa(), box, 'totp:user:1');
    return back !== null && back.every((b, i) => b === rfc[i]) && (await openSecret(await keys.mfa(), box, 'totp:user:2')) === null;
  });
  await check('recovery code hash', async () => {
    const [code] = generateRecoveryCodes(1) as [string];
    return /^[0-9a-f]{64}$/.test((await hashRecoveryCode(await keys.mfaRecovery(), code.toUpperCase())) ?? '');
  });
  await check('qr svg data url', () => {
    const url = qrSvgDataUrl(otpauthUri({ issuer: 'Edge Admin', account: 'alice' }, rfc));
    return url.startsWith('data:image/svg+xml;base64,') && atob(url.slice(26)).includes('<path d="M');
  });

  const rp: RelyingParty = { id: 'admin.example.com', name: 'Edge Admin', origins: ['https://admin.example.com'] };
  const origin = rp.origins[0]!;
  const auth = await SoftAuthenticator.create();
  const regOptions = await passkeyRegistrationOptions(rp, { id: 1, loginName: 'alice' }, []);
  const reg = await verifyPasskeyRegistration(rp, await auth.register(regOptions, origin), regOptions.challenge);
  await check('webauthn registration verified', () => reg.ok || reg.reason);
  if (!reg.ok) return out;
  const passkey = reg.value;
  const authOptions = await passkeyAuthenticationOptions(rp, [passkey]);
  const answer = await auth.assert(authOptions, origin);
  await check('webauthn assertion verified', async () => {
    const r = await verifyPasskeyAssertion(rp, answer, authOptions.challenge, [passkey]);
    return r.ok ? r.value.newCounter === 1 : r.reason;
  });
  await check('webauthn wrong challenge refused', async () => !(await verifyPasskeyAssertion(rp, answer, regOptions.challenge, [passkey])).ok);
  await check('webauthn counter rollback refused', async () => !(await verifyPasskeyAssertion(rp, answer, authOptions.challenge, [{ ...passkey, counter: 1 }])).ok);
  await check('webauthn tampered signature refused', async () => {
    const sig = answer.response.signature;
    const tampered = { ...answer, response: { ...answer.response, signature: sig.slice(0, -2) + (sig.slice(-2) === 'AA' ? 'AQ' : 'AA') } };
    return !(await verifyPasskeyAssertion(rp, tampered, authOptions.challenge, [passkey])).ok;
  });
  return out;
}
