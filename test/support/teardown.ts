// Preloaded by bunfig.toml: hooks at the top level of a preload file span the whole run, so the
// scratch folders of every test file are removed, and the workerd serving the D1 test databases
// stopped, once all files are done.
import { afterAll, setDefaultTimeout } from 'bun:test';
import { rmSync } from 'node:fs';
import { TEST_TMP_ROOT } from './tmp-root.ts';
import { stopWorkerd } from './workerd.ts';

// bunfig's `timeout` is not read by bun test (its default of 5 s applied): set it here for every file.
// A busy 2-core machine running several suites at once, and the D1 runs through workerd, need it.
setDefaultTimeout(30_000);

afterAll(async () => {
  rmSync(TEST_TMP_ROOT, { recursive: true, force: true });
  await stopWorkerd();
});
