import { contractSuite } from './contract';
import { startBunTargets } from './servers';

// `bun src/entry/bun.ts` on free ports with temporary databases and files folders.
contractSuite('bun', startBunTargets);
