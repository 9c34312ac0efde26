// The hc client (src/client.ts) in an SPA: examples/hc-spa/session.ts type-checks under a
// browser-only tsconfig (DOM types, no Bun or Node types) with no casts, and runs against a live server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../scripts/server-commands.ts';
import { bunServer, E2E_ADMIN_PASSWORD, type Target } from './e2e/servers.ts';
import { routeNames, session } from '../examples/hc-spa/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'edge-hc-'));
let server: Target;
beforeAll(async () => {
  server = await bunServer(join(dir, 'srv'), false);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

describe('hc client in a browser-only project', () => {
  test('the session type-checks with DOM types only and uses no casts', () => {
    const source = readFileSync(join(ROOT, 'examples/hc-spa/session.ts'), 'utf8').replace(/\/\/.*$/gm, '');
    expect(source).not.toMatch(/\bas\s+(?!const\b)[A-Za-z{[(]|\bany\b|@ts-/);
    const r = spawnSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(ROOT, 'examples/hc-spa/tsconfig.json')], { encoding: 'utf8', timeout: 280_000 });
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.status).toBe(0);
    // The per-kind checks are part of that run: exact FileRecord / ImageRecord answers, and a file
    // record's width must stay a type error (examples/hc-spa/per-kind.ts).
    const checks = readFileSync(join(ROOT, 'examples/hc-spa/per-kind.ts'), 'utf8');
    expect(checks.match(/^\s*\/\/ @ts-expect-error/gm)?.length).toBe(2);
    expect(readFileSync(join(ROOT, 'examples/hc-spa/tsconfig.json'), 'utf8')).toContain('"per-kind.ts"');
  }, 300_000);

  test('and runs: menu route names, numeric ids, typed upload forms, per-kind records', async () => {
    const file = new File(['hello'], 'hello.txt', { type: 'text/plain' });
    const out = await session(server.baseUrl, 'admin', E2E_ADMIN_PASSWORD, new Blob([PNG], { type: 'image/png' }), file);
    expect(out.names).toContain('UserManagement');
    expect(out.names).toContain('Users');
    expect(new Set(out.names).size).toBe(out.names.length);
    expect(out.firstChildPath).toBe('/user/list');
    expect(out.preview.url).toStartWith('/app/sysImage/preview?');
    expect(out.imageSize).toBe('1x1');
    expect(out.widths).toContain(1);
    expect(out.fileName).toBe('hello.txt');
    expect(out.loggedOut).toBe(true);
    expect(routeNames([])).toEqual([]);
  }, 60_000);
});
