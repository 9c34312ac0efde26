// A client generated from the live /openapi.json works for an SPA without casts: types from
// openapi-typescript (tools/codegen/generate.mjs, the command docs/typed-client.md gives), an
// openapi-fetch session (examples/openapi-fetch/session.ts) type-checked under a browser-only
// tsconfig, then run against the same server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../scripts/server-commands.ts';
import { bunServer, E2E_ADMIN_PASSWORD, type Target } from './e2e/servers.ts';

const dir = mkdtempSync(join(tmpdir(), 'edge-genclient-'));
const EXAMPLE = join(ROOT, 'examples/openapi-fetch');
let server: Target;

beforeAll(async () => {
  server = await bunServer(join(dir, 'srv'), false);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const run = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 280_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};

describe('client generated with openapi-typescript + openapi-fetch', () => {
  test('generate the types from the live document', async () => {
    const doc = join(dir, 'openapi.json');
    writeFileSync(doc, await (await fetch(`${server.baseUrl}/openapi.json`)).text());
    const r = run('node', ['tools/codegen/generate.mjs', doc, join(EXAMPLE, 'schema.d.ts')]);
    expect(r).toMatchObject({ code: 0 });
    const types = readFileSync(join(EXAMPLE, 'schema.d.ts'), 'utf8');
    expect(types).toContain('sysUser_page: {'); // operations are named by operationId
    expect(types).toMatch(/file: Blob/);
    expect(types).toMatch(/pageNo\?: number/); // defaults stay optional
  }, 300_000);

  test('the session type-checks with a browser-only tsconfig and uses no casts', () => {
    const source = readFileSync(join(EXAMPLE, 'session.ts'), 'utf8').replace(/\/\/.*$/gm, '');
    expect(source).not.toMatch(/\bas\s+(?!const\b)[A-Za-z{[(]|\bany\b|@ts-/);
    const r = run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(EXAMPLE, 'tsconfig.json')]);
    expect(r.out.trim()).toBe('');
    expect(r.code).toBe(0);
  }, 300_000);

  test('and it runs: login → user info → page → add → upload → logout', async () => {
    // Imported by path: the root typecheck must not follow it into the generated (gitignored) schema.
    const mod: { session: (base: string, name: string, password: string) => Promise<Record<string, any>> } = await import(join(EXAMPLE, 'session.ts'));
    const { session } = mod;
    const out = await session(server.baseUrl, 'admin', E2E_ADMIN_PASSWORD);
    expect(out).toMatchObject({ user: 'admin', permissions: ['*'], users: 1, status: 200 });
    expect(out.newId).toBeGreaterThan(1);
    expect(out.fileUrl).toContain('/app/sysFile/download?id=');
  }, 60_000);
});
