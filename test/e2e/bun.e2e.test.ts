import { contractSuite } from './contract.ts';
import { startLocalTargets } from './servers.ts';

// `npm run start` (src/entry/bun.ts) on free ports with temporary databases and files folders.
contractSuite('bun', () => startLocalTargets('bun'));
