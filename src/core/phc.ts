/** argon2id cost parameters, as in a PHC string's `m=…,t=…,p=…`. */
export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/**
 * A constant argon2id PHC string with `params` that no password verifies against (its hash is 32
 * zero bytes under a zero salt): the login path verifies it for an unknown user, which costs exactly
 * what verifying a real hash with the same parameters costs, without hashing anything at start-up.
 */
export function dummyPhc(params: Argon2Params): string {
  return `$argon2id$v=19$m=${params.memoryCost},t=${params.timeCost},p=${params.parallelism}$${'A'.repeat(22)}$${'A'.repeat(43)}`;
}
