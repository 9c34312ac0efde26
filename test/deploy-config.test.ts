import { describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..');
const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
const section = (name: string) => toml.match(new RegExp(`^\\[${name}\\]\\n((?:[^\\[\\n].*\\n?)*)`, 'm'))?.[1] ?? '';

describe('deploy configuration', () => {
  test('wrangler.toml: minified, observable, CPU-bounded, placed', () => {
    expect(toml).toMatch(/^minify = true$/m);
    expect(section('observability')).toMatch(/^enabled = true$/m);
    const cpu = Number(section('limits').match(/^cpu_ms = (\d+)$/m)?.[1]);
    // Above an argon2id login (~100 ms CPU in workerd), far below the 30 s default.
    expect(cpu).toBeGreaterThanOrEqual(500);
    expect(cpu).toBeLessThanOrEqual(5000);
    expect(section('placement')).toMatch(/^mode = "(smart|off)"$/m);
  });

  test('npm run deploy refuses the placeholder database id and names the exact command', () => {
    const r = spawnSync(process.execPath, ['scripts/deploy.ts', '--confirm'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('placeholder database_id');
    expect(r.stderr).toContain('npx wrangler d1 create edge-admin --location ');
  });
});
