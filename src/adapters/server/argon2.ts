import { hash, verify } from '@node-rs/argon2';
import { dummyPhc } from '../../core/phc.ts';
import type { PasswordHasher } from '../../core/ports.ts';

/** OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. */
export const ARGON2_PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** argon2id through @node-rs/argon2 (native), producing standard PHC strings. */
export function nodeArgon2Hasher(params = ARGON2_PARAMS): PasswordHasher {
  // Algorithm.Argon2id is a const enum in the package's types; its value is 2.
  const options = { algorithm: 2 as const, ...params };
  return {
    hash: (password) => hash(password, options),
    dummy: dummyPhc(params),
    async verify(phc, password) {
      try {
        return await verify(phc, password);
      } catch {
        return false;
      }
    },
  };
}
