import { contractSuite } from './contract';
import { startLocalTargets } from './servers';

// `npm run start` (src/entry/bun.ts) on free ports with temporary databases and files folders.
contractSuite('bun', () => startLocalTargets('bun'));
