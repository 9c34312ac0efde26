import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folder under which this test process keeps its scratch files (removed by test/support/teardown.ts). */
export const TEST_TMP_ROOT = join(tmpdir(), `edge-admin-test-${process.pid}`);

/** A fresh scratch folder for one test app or test file. */
export function scratchDir(prefix: string): string {
  mkdirSync(TEST_TMP_ROOT, { recursive: true });
  return mkdtempSync(join(TEST_TMP_ROOT, `${prefix}-`));
}
