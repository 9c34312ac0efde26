import { argon2id, setWASMModules } from 'argon2-wasm-edge';
import { constantTimeEqual } from '../../core/keys.ts';
import { dummyPhc } from '../../core/phc.ts';
import type { PasswordHasher } from '../../core/ports.ts';

/** The same OWASP argon2id baseline as the Bun adapter: 19 MiB, 2 passes, 1 lane, 32-byte output. */
export const ARGON2_PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1 };
const HASH_LENGTH = 32;
const SALT_LENGTH = 16;

/**
 * workerd forbids compiling WebAssembly from bytes at run time, so on Workers the two modules are
 * imported as `.wasm` (wrangler turns those into compiled modules) and handed over here once.
 * Elsewhere (Bun tests) the package compiles its embedded copy and this call is not needed.
 */
export function useCompiledWasm(modules: { argon2: WebAssembly.Module; blake2b: WebAssembly.Module }): Promise<void> {
  return setWASMModules({ argon2WASM: modules.argon2, blake2bWASM: modules.blake2b });
}

const PHC = /^\$argon2id\$v=19\$m=(\d{1,7}),t=(\d{1,4}),p=(\d{1,3})\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,128})$/;

function b64decode(s: string): Uint8Array {
  const bin = atob(s + '='.repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function b64encode(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/=+$/, '');
}

/**
 * argon2id in WebAssembly (argon2-wasm-edge), writing and reading the same PHC strings as
 * @node-rs/argon2: `$argon2id$v=19$m=…,t=…,p=…$<salt b64>$<hash b64>` without padding.
 * Verification recomputes with the stored parameters and compares without an early exit.
 */
export function wasmArgon2Hasher(params = ARGON2_PARAMS): PasswordHasher {
  return {
    dummy: dummyPhc(params),
    async hash(password) {
      const salt = crypto.getRandomValues(new Uint8Array(SALT_LENGTH));
      const out = await argon2id({
        password,
        salt,
        iterations: params.timeCost,
        parallelism: params.parallelism,
        memorySize: params.memoryCost,
        hashLength: HASH_LENGTH,
        outputType: 'binary',
      });
      return `$argon2id$v=19$m=${params.memoryCost},t=${params.timeCost},p=${params.parallelism}$${b64encode(salt)}$${b64encode(out)}`;
    },
    async verify(phc, password) {
      const m = PHC.exec(phc);
      if (!m) return false;
      const [, mem, time, par, salt, expected] = m;
      // Bounds keep a corrupted row from asking for gigabytes or minutes of work.
      const memorySize = Number(mem);
      const iterations = Number(time);
      const parallelism = Number(par);
      if (memorySize > 262144 || iterations > 16 || parallelism > 4 || memorySize < 8 * parallelism) return false;
      const want = b64decode(expected!);
      try {
        const out = await argon2id({
          password,
          salt: b64decode(salt!),
          iterations,
          parallelism,
          memorySize,
          hashLength: want.length,
          outputType: 'binary',
        });
        return constantTimeEqual(b64encode(out), expected!);
      } catch {
        return false;
      }
    },
  };
}
