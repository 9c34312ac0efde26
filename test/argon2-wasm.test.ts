import { describe, expect, test } from 'bun:test';
import { ARGON2_PARAMS, nodeArgon2Hasher } from '../src/adapters/server/argon2.ts';
import { ARGON2_PARAMS as WASM_PARAMS, wasmArgon2Hasher } from '../src/adapters/workers/argon2-wasm.ts';

// Under Bun the package compiles its embedded WASM copy; workerd gets the precompiled modules
// (src/entry/worker.ts) and is covered by the end-to-end suite's logins under `wrangler dev`.
const cheap = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

describe('argon2id in WebAssembly vs @node-rs/argon2', () => {
  test('both runtimes use the same parameters', () => {
    expect(WASM_PARAMS).toEqual(ARGON2_PARAMS);
  });

  test('a hash made by the WASM hasher verifies natively, and the other way round (production parameters)', async () => {
    const wasm = wasmArgon2Hasher();
    const native = nodeArgon2Hasher();
    const fromWasm = await wasm.hash('Correct-Horse-42 ünï');
    expect(fromWasm).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await native.verify(fromWasm, 'Correct-Horse-42 ünï')).toBe(true);
    expect(await native.verify(fromWasm, 'Correct-Horse-43 ünï')).toBe(false);
    const fromNative = await native.hash('Correct-Horse-42 ünï');
    expect(await wasm.verify(fromNative, 'Correct-Horse-42 ünï')).toBe(true);
    expect(await wasm.verify(fromNative, 'correct-Horse-42 ünï')).toBe(false);
  });

  test('other parameters round-trip too, as they are read from the PHC string', async () => {
    const wasm = wasmArgon2Hasher(cheap);
    const native = nodeArgon2Hasher(cheap);
    expect(await native.verify(await wasm.hash('pw-one'), 'pw-one')).toBe(true);
    expect(await wasmArgon2Hasher().verify(await native.hash('pw-two'), 'pw-two')).toBe(true);
  });

  test('malformed, foreign or absurd PHC strings never verify', async () => {
    const wasm = wasmArgon2Hasher(cheap);
    const good = await wasm.hash('pw');
    for (const bad of [
      '',
      'not-a-hash',
      good.replace('$argon2id$', '$argon2i$'),
      good.replace('v=19', 'v=16'),
      good.replace('m=1024', 'm=9999999'),
      good.slice(0, -4),
    ]) {
      expect(await wasm.verify(bad, 'pw')).toBe(false);
    }
  });
});
