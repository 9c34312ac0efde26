import { contractSuite } from './contract';
import { startWorkerTargets } from './servers';

// `wrangler dev --local`: real workerd with local D1 and R2, migrations applied by wrangler itself.
contractSuite('workerd', startWorkerTargets, 120_000);
