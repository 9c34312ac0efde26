import { afterAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Miniflare } from 'miniflare';
import { ROOT, runtimeBinary } from '../scripts/server-commands.ts';
import { probe } from './support/export-probe.ts';
import { scratchDir } from './support/tmp-root.ts';

// The export/import building blocks (XLSX write/read, CSV, HTML sanitiser, cron) give the same
// results on the four runtimes: one probe (test/support/export-probe.ts) runs here on Bun, as a
// script on Node and Deno, and inside workerd bundled by wrangler exactly as the production
// Worker is (esbuild, nodejs_compat, minified), and the four digests must be equal.
const dir = scratchDir('export-rt');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MAIN = join(ROOT, 'test/support/export-probe-main.ts');

let bun: Record<string, unknown>;

describe('export/import libraries on every runtime', () => {
  test('Bun: the probe passes its own checks', async () => {
    bun = await probe();
    expect(bun.xlsxAwkwardReadsBack).toBe(true);
    expect(bun.xlsxUsersSheetBytes).toBe(true);
    expect(bun.xlsxLyingBomb).toBe(400);
    expect(bun.csvGb18030).toBe('[["张三","1"]]');
    expect(bun.cronError).toBe('day-of-month: 32 is out of range 1-31');
    expect((bun.html as string[])[0]).toBe('<p>hi<a rel="noopener noreferrer nofollow">a</a></p>');
  }, 60_000);

  test.each([
    ['node', [runtimeBinary('node'), MAIN]],
    ['deno', [runtimeBinary('deno'), 'run', '--allow-read', '--allow-env', MAIN]],
  ])('%s: same digest as Bun', (_name, argv) => {
    const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual(bun);
  }, 150_000);

  test('workerd: same digest as Bun, from the wrangler bundle', async () => {
    writeFileSync(
      join(dir, 'wrangler.toml'),
      `name = "export-probe"\nmain = "${join(ROOT, 'test/support/export-probe-worker.ts')}"\ncompatibility_date = "2026-04-01"\ncompatibility_flags = ["nodejs_compat"]\nminify = true\n`,
    );
    const out = join(dir, 'out');
    const built = spawnSync('node', [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', out, '-c', join(dir, 'wrangler.toml')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: 'true' },
    });
    expect(built.status, built.stdout + built.stderr).toBe(0);
    const files = readdirSync(out).filter((f) => f.endsWith('.js'));
    expect(files).toHaveLength(1);
    const script = readFileSync(join(out, files[0]!), 'utf8');
    // no WebAssembly compiled at run time (workerd refuses it), no code from strings
    expect(readdirSync(out).filter((f) => f.endsWith('.wasm'))).toEqual([]);
    console.log(`export probe Worker bundle: ${(statSync(join(out, files[0]!)).size / 1024).toFixed(0)} KiB minified, ${(gzipSync(script).length / 1024).toFixed(0)} KiB gzipped`);
    const mf = new Miniflare({ modules: true, script, compatibilityDate: '2026-04-01', compatibilityFlags: ['nodejs_compat'] });
    try {
      const res = await mf.dispatchFetch('http://probe/');
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(JSON.parse(text)).toEqual(bun);
    } finally {
      await mf.dispose();
    }
  }, 180_000);
});
