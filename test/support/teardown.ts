// Preloaded by bunfig.toml: hooks at the top level of a preload file span the whole run, so the
// scratch folders of every test file are removed, and the workerd serving the D1 test databases
// stopped, once all files are done.
import { afterAll } from 'bun:test';
import { rmSync } from 'node:fs';
import { TEST_TMP_ROOT } from './tmp-root';
import { stopWorkerd } from './workerd';

afterAll(async () => {
  rmSync(TEST_TMP_ROOT, { recursive: true, force: true });
  await stopWorkerd();
});
