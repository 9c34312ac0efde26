// `node|deno|bun test/support/mfa-self-check-main.ts`: prints the self-check's results as JSON.
import { mfaSelfCheck } from './mfa-self-check.ts';

console.log(JSON.stringify(await mfaSelfCheck()));
