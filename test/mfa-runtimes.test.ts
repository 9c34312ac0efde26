import { afterAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runtimeBinary } from '../scripts/server-commands.ts';
import { mfaSelfCheck } from './support/mfa-self-check.ts';

// The second-factor pieces (TOTP, secret box, recovery codes, QR, and the WebAuthn ceremony with
// @simplewebauthn/server against the software authenticator) run the same on every runtime we
// ship: the one self-check under Bun in-process, under Node and Deno as they are started from
// node_modules/.bin, and in workerd as a bundled Worker WITHOUT nodejs_compat (Miniflare), so a
// library reaching for a Node built-in, or compiling WASM at run time, fails here.
const SELF_CHECK = 'test/support/mfa-self-check-main.ts';
const dir = mkdtempSync(join(tmpdir(), 'mfa-runtimes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function expectAllTrue(results: Record<string, boolean | string>) {
  expect(Object.keys(results)).toHaveLength(10);
  for (const [name, value] of Object.entries(results)) expect(`${name}: ${value}`).toBe(`${name}: true`);
}

function runCli(argv: string[]): Record<string, boolean | string> {
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' } });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

describe('second factor on every runtime', () => {
  test('Bun', async () => expectAllTrue(await mfaSelfCheck()));

  test('Node', () => expectAllTrue(runCli([runtimeBinary('node'), SELF_CHECK])), 20_000);

  test('Deno (no permissions at all)', () => expectAllTrue(runCli([runtimeBinary('deno'), 'run', '--no-prompt', SELF_CHECK])), 20_000);

  test('workerd (bundled Worker, no nodejs_compat)', async () => {
    const entry = join(dir, 'worker.ts');
    writeFileSync(entry, `import { mfaSelfCheck } from ${JSON.stringify(join(ROOT, 'test/support/mfa-self-check.ts'))};
export default { async fetch() { return Response.json(await mfaSelfCheck()); } };`);
    const built = await Bun.build({ entrypoints: [entry], outdir: dir, target: 'browser', format: 'esm' });
    if (!built.success) throw new Error(built.logs.join('\n'));
    const { Miniflare } = await import('miniflare');
    const mf = new Miniflare({ modules: true, script: readFileSync(built.outputs[0]!.path, 'utf8'), compatibilityDate: '2026-04-01' });
    try {
      const res = await mf.dispatchFetch('http://check/');
      expectAllTrue((await res.json()) as Record<string, boolean | string>);
    } finally {
      await mf.dispose();
    }
  }, 30_000);
});
