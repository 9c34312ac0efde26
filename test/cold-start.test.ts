import { describe, expect, test } from 'bun:test';
import { nodeArgon2Hasher } from '../src/adapters/server/argon2.ts';
import { wasmArgon2Hasher } from '../src/adapters/workers/argon2-wasm.ts';
import type { PasswordHasher } from '../src/core/ports.ts';
import { makeTestApp } from './support/app.ts';

// A new Workers isolate used to hash a random password in createApp, so its first request paid
// one argon2 run (0.4-0.6 s) whatever it was. The unknown-user path now verifies a constant PHC string.
describe('cold start: no password hash at start-up', () => {
  test('creating the app hashes nothing; an unknown user verifies the dummy with the same parameters', async () => {
    const real = nodeArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 });
    const hashed: string[] = [];
    const verified: string[] = [];
    const hasher: PasswordHasher = {
      dummy: real.dummy,
      hash: (p) => (hashed.push(p), real.hash(p)),
      verify: (phc, p) => (verified.push(phc), real.verify(phc, p)),
    };
    const t = await makeTestApp({ hasher });
    const afterBootstrap = hashed.length; // the administrator's own hash
    expect((await t.call('GET', '/health')).status).toBe(200);
    expect((await t.call('POST', '/auth/login', { body: { loginName: 'nobody', password: 'Whatever-123' } })).status).toBe(401);
    expect(hashed.length).toBe(afterBootstrap);
    expect(verified).toEqual([real.dummy!]);
    // Same cost parameters as the stored hashes, so both paths take the same time.
    const stored = (t.sqlite.query(`SELECT password_hash AS h FROM users WHERE login_name = 'admin'`).get() as { h: string }).h;
    expect(real.dummy!.split('$')[3]).toBe(stored.split('$')[3]!);
  });

  test('no password verifies against the dummy, on either hasher', async () => {
    for (const h of [nodeArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 }), wasmArgon2Hasher({ memoryCost: 1024, timeCost: 1, parallelism: 1 })]) {
      expect(h.dummy).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$A{22}\$A{43}$/);
      for (const pw of ['', 'admin', 'Correct-Horse-42']) expect(await h.verify(h.dummy!, pw)).toBe(false);
    }
  });
});
