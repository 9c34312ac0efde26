import { describe, test } from 'bun:test';
import { contractSuite } from './contract.ts';
import { externalTargets } from './servers.ts';

// E2E_BASE_URL=https://… (captcha off; E2E_CAPTCHA_BASE_URL for one with it on, E2E_ADMIN_PASSWORD)
// runs the same suite against a server started elsewhere, e.g. a deployed Worker.
if (process.env.E2E_BASE_URL) contractSuite('external', async () => externalTargets());
else describe.skip('contract over HTTP (external)', () => test('set E2E_BASE_URL to run', () => {}));
