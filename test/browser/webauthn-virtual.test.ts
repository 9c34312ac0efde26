// The passkey wrapper (src/modules/mfa/webauthn.ts) against a real browser's WebAuthn: Chromium
// with a CTAP2 virtual authenticator (DevTools protocol), on a plain page served at
// http://localhost (a secure context). Options come from the wrapper, the browser builds the
// answer, the wrapper verifies it. The HTTP routes do not exist yet; this proves the ceremony
// with an authenticator and a client we did not write.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { passkeyAuthenticationOptions, passkeyRegistrationOptions, verifyPasskeyAssertion, verifyPasskeyRegistration, type RelyingParty } from '../../src/modules/mfa/webauthn.ts';
import { hasChromium, inChromium, launchChromium } from './support.ts';

let browser: Awaited<ReturnType<typeof launchChromium>>;
let server: ReturnType<typeof Bun.serve> | undefined;

beforeAll(async () => {
  if (!hasChromium) return;
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<!doctype html><title>passkey</title>', { headers: { 'content-type': 'text/html' } }) });
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  await browser?.close();
  server?.stop(true);
});

describe.skipIf(!hasChromium)(inChromium('passkeys in Chromium (virtual authenticator)'), () => {
  test('register, two assertions with a rising counter; a foreign challenge and a replayed answer refused', async () => {
    const origin = `http://localhost:${server!.port}`;
    const rp: RelyingParty = { id: 'localhost', name: 'Edge Admin', origins: [origin] };
    const page = await browser.context.newPage();
    await page.goto(origin);
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true },
    });

    const regOptions = await passkeyRegistrationOptions(rp, { id: 7, loginName: 'alice' }, []);
    const created = (await page.evaluate(async (json) => {
      const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(json as never);
      const cred = (await navigator.credentials.create({ publicKey })) as PublicKeyCredential;
      return cred.toJSON();
    }, regOptions)) as RegistrationResponseJSON;
    const reg = await verifyPasskeyRegistration(rp, created, regOptions.challenge);
    if (!reg.ok) throw new Error(reg.reason);
    const passkey = reg.value;
    expect(passkey.credentialId).toBe(created.id);

    const assert = async () => {
      const options = await passkeyAuthenticationOptions(rp, [passkey]);
      const answer = (await page.evaluate(async (json) => {
        const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(json as never);
        const cred = (await navigator.credentials.get({ publicKey })) as PublicKeyCredential;
        return cred.toJSON();
      }, options)) as AuthenticationResponseJSON;
      return { options, answer };
    };
    const counters: number[] = [];
    for (let i = 0; i < 2; i++) {
      const { options, answer } = await assert();
      const r = await verifyPasskeyAssertion(rp, answer, options.challenge, [passkey]);
      if (!r.ok) throw new Error(r.reason);
      counters.push((passkey.counter = r.value.newCounter));
    }
    expect(counters[1]!).toBeGreaterThan(counters[0]!);

    const { answer } = await assert();
    const foreign = await verifyPasskeyAssertion(rp, answer, regOptions.challenge, [passkey]);
    expect(foreign.ok).toBe(false);
    // the same answer replayed after it was accepted: the counter no longer rises
    const first = await assert();
    const ok = await verifyPasskeyAssertion(rp, first.answer, first.options.challenge, [passkey]);
    if (!ok.ok) throw new Error(ok.reason);
    passkey.counter = ok.value.newCounter;
    const replay = await verifyPasskeyAssertion(rp, first.answer, first.options.challenge, [passkey]);
    expect(replay.ok).toBe(false);
    if (!replay.ok) expect(replay.reason).toMatch(/counter/);
  }, 30_000);
});
