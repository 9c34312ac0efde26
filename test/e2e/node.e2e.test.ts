import { contractSuite } from './contract.ts';
import { startLocalTargets } from './servers.ts';

// `npm run start:node` (src/entry/node.ts) on free ports with temporary databases and files folders.
contractSuite('node', () => startLocalTargets('node'));
