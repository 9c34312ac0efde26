import { contractSuite } from './contract.ts';
import { startLocalTargets } from './servers.ts';

// `npm run start:deno` (src/entry/deno.ts) on free ports with temporary databases and files folders.
contractSuite('deno', () => startLocalTargets('deno'));
