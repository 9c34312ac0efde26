import { contractSuite } from './contract.ts';
import { startWorkerTargets } from './servers.ts';

// `wrangler dev --local`: real workerd with local D1 and R2, migrations applied by wrangler itself.
contractSuite('workerd', startWorkerTargets, 120_000);
