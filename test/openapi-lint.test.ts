// The served OpenAPI document passes Redocly's recommended ruleset and Spectral's spectral:oas with
// no error and no warning, except the ones justified in openapi/.redocly.lint-ignore.yaml.
// Both linters are devDependencies and run offline (no network, no telemetry).
import { describe, expect, test } from 'bun:test';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTestApp } from './support/app.ts';

const ROOT = resolve(import.meta.dir, '..');
const DIR = join(ROOT, 'openapi');
const BIN = join(ROOT, 'node_modules/.bin');

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((ok) => {
    const child = spawn(cmd, args, {
      cwd: DIR,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (err += b));
    child.once('exit', (code) => ok({ code, out, err }));
  });
}

const t = await makeTestApp();
// Fetched as a client on the default local address would fetch it (servers names that origin).
const doc = await (await t.app.request('http://127.0.0.1:3000/openapi.json')).json();
writeFileSync(join(DIR, 'openapi.json'), JSON.stringify(doc, null, 2));
// Both at once: Spectral alone takes ~10 s.
const redocly = run(join(BIN, 'redocly'), ['lint', 'openapi.json', '--config', 'redocly.yaml', '--format=json']);
const spectral = run(join(BIN, 'spectral'), ['lint', 'openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet']);

describe('OpenAPI linters', () => {
  test('redocly lint (recommended): no errors, no warnings', async () => {
    const { out, err } = await redocly;
    const start = out.indexOf('{');
    if (start < 0) throw new Error(`redocly printed no report:\n${out}\n${err}`);
    const report = JSON.parse(out.slice(start)) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
    const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);

  test('spectral lint (spectral:oas): no errors, no warnings', async () => {
    const { code, out, err } = await spectral;
    const start = out.indexOf('[');
    if (start < 0) throw new Error(`spectral printed no report (exit ${code}):\n${out}\n${err}`);
    const results = JSON.parse(out.slice(start)) as { code: string; message: string; path: string[] }[];
    expect(results.map((r) => `${r.code} ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  }, 120_000);
});
