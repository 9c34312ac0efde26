import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PERMISSION_CODES } from '../src/core/permissions.ts';
import { keyMayCarry } from '../src/access/api-key-statement.ts';
import { makeTestApp } from './support/app.ts';

const SRC = join(import.meta.dir, '../src');
const RUNTIME_IMPORT = /(?:from\s+|import\s*\(\s*|\bimport\s+|require\s*\(\s*)['"](bun|bun:[^'"]*|node:[^'"]*|cloudflare:[^'"]*|@node-rs\/[^'"]*|fs|path|os|crypto|child_process)['"]/;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Runtime globals the core may not use; a property named like one (`job.process`) is fine. */
const RUNTIME_GLOBAL = /(?<![\w$.])(?:(?:Bun|Deno|process)\s*\.|Buffer\b)/;

/** Source without block and line comments (a `//` inside a string may cut it short; that only hides text). */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
}

/** The module specifiers a file imports or re-exports. */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?(?:from\s*)?['"]([^'"]+)['"]/g)].map((m) => m[1]!);
}

describe('architecture', () => {
  test('core code imports no runtime (only adapters/ and entry/ may)', () => {
    const offenders: string[] = [];
    for (const file of walk(SRC)) {
      const rel = relative(SRC, file);
      if (rel.startsWith('adapters/') || rel.startsWith('entry/')) continue;
      const text = readFileSync(file, 'utf8');
      const m = text.match(RUNTIME_IMPORT);
      if (m) offenders.push(`${rel}: ${m[1]}`);
    }
    expect(offenders).toEqual([]);
  });

  /** Where an import specifier of `file` (relative to src/) points, relative to src/ (undefined: a package). */
  const target = (file: string, spec: string) => (spec.startsWith('.') ? relative(SRC, join(SRC, file, '..', spec)) : undefined);
  /** Every import of a file under `dirs` that points into one of `forbidden` (paths relative to src/). */
  function importsInto(dirs: RegExp, forbidden: RegExp): string[] {
    const offenders: string[] = [];
    for (const file of walk(SRC)) {
      const rel = relative(SRC, file);
      if (!dirs.test(rel)) continue;
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const to = target(rel, spec);
        if (to !== undefined && forbidden.test(to)) offenders.push(`${rel}: ${spec}`);
      }
    }
    return offenders;
  }

  test('layers point one way: entry → app → modules → (access, http) → db → core', () => {
    // core/ imports nothing above it; db/ only core/; access/ only core/ and db/; http/ never modules/.
    expect(importsInto(/^core\//, /^(db|access|http|modules|compat|entry|adapters)\/|^(deps|app)\.ts$/)).toEqual([]);
    expect(importsInto(/^db\//, /^(access|http|modules|compat|entry|adapters)\/|^(deps|app)\.ts$/)).toEqual([]);
    expect(importsInto(/^access\//, /^(http|modules|compat|entry|adapters)\/|^(deps|app)\.ts$/)).toEqual([]);
    expect(importsInto(/^http\//, /^(modules|compat|entry|adapters)\/|^(deps|app)\.ts$/)).toEqual([]);
  });

  test('nothing below app.ts imports deps.ts (the wiring type): services take core/ports.ts', () => {
    expect(importsInto(/^(core|db|access|http|modules|compat)\//, /^deps\.ts$/)).toEqual([]);
  });

  test("a module is used from outside only through its index.ts (what it exports on purpose)", () => {
    const offenders: string[] = [];
    for (const file of walk(SRC)) {
      const rel = relative(SRC, file);
      const own = rel.match(/^modules\/([^/]+)\//)?.[1];
      for (const spec of importsOf(readFileSync(file, 'utf8'))) {
        const m = target(rel, spec)?.match(/^modules\/([^/]+)\/(.+)$/);
        if (m && m[1] !== own && m[2] !== 'index.ts') offenders.push(`${rel}: ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  test('nothing on the request path reaches the database but through a runner (no Kysely execute, no raw ports)', () => {
    const offenders: string[] = [];
    const bypass = /\.execute(TakeFirst(OrThrow)?)?\(|\.executeQuery\(|\bdeps\.(db|atomic|read|readMany|readNow|readManyNow)\b/;
    for (const file of walk(SRC)) {
      const rel = relative(SRC, file);
      // Readiness asks the port itself whether the database answers (GET /health/ready, no request plan).
      if (!/^(core|db|access|http|modules|compat)\//.test(rel) || rel === 'core/readiness.ts') continue;
      const m = withoutComments(readFileSync(file, 'utf8')).match(bypass);
      if (m) offenders.push(`${rel}: ${m[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  test("no handler reads c.var (Hono builds a new object of every variable on each access): c.get('name')", () => {
    const offenders: string[] = [];
    for (const file of walk(SRC)) {
      const m = withoutComments(readFileSync(file, 'utf8')).match(/\bc\.var\b/);
      if (m) offenders.push(relative(SRC, file));
    }
    expect(offenders).toEqual([]);
  });

  test('the layer check itself catches an import that points the wrong way', () => {
    expect(target('core/x.ts', '../db/schema.ts')).toBe('db/schema.ts');
    expect(target('modules/users/users.service.ts', '../auth/login.service.ts')).toBe('modules/auth/login.service.ts');
    expect(target('modules/users/users.service.ts', '../../deps.ts')).toBe('deps.ts');
    expect(target('db/runner.ts', 'kysely')).toBeUndefined();
  });

  test('core code uses no runtime global: Bun., Deno., process., Buffer (comments aside)', () => {
    const offenders: string[] = [];
    for (const file of walk(SRC)) {
      const rel = relative(SRC, file);
      if (rel.startsWith('adapters/') || rel.startsWith('entry/')) continue;
      const m = withoutComments(readFileSync(file, 'utf8')).match(RUNTIME_GLOBAL);
      if (m) offenders.push(`${rel}: ${m[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  test('the runtime-global check itself catches each global, and not a comment or a property', () => {
    for (const code of ['Bun.version', 'Deno.env.get("X")', 'const x = process.env.X;', 'Buffer.from(s)', 'x instanceof Buffer'])
      expect(withoutComments(code)).toMatch(RUNTIME_GLOBAL);
    for (const code of ['// process.env on Bun', '/* Bun.serve */ const a = 1;', 'job.process.run()', 'const myBuffer = 1;', 'BufferSource'])
      expect(withoutComments(code)).not.toMatch(RUNTIME_GLOBAL);
  });

  test('the import check itself catches a runtime import', () => {
    expect(RUNTIME_IMPORT.test(`import { Database } from 'bun:sqlite';`)).toBe(true);
    expect(RUNTIME_IMPORT.test(`import { readFile } from "node:fs";`)).toBe(true);
    expect(RUNTIME_IMPORT.test(`import { hash } from '@node-rs/argon2';`)).toBe(true);
    expect(RUNTIME_IMPORT.test(`import 'node:zlib';`)).toBe(true);
    expect(RUNTIME_IMPORT.test(`import { z } from 'zod';`)).toBe(false);
    expect(RUNTIME_IMPORT.test(`const important = 'node:x';`)).toBe(false);
    expect(importsOf(`import type { X } from '../modules/files/signed-url';\nexport { y } from './y';`)).toEqual(['../modules/files/signed-url', './y']);
    expect(importsOf(`import './http/context';`)).toEqual(['./http/context']);
  });
});

describe('permission declarations', async () => {
  const t = await makeTestApp();
  const res = await t.app.request('/openapi.json');
  const doc = (await res.json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
  const seeded = new Set(
    (t.sqlite.query(`SELECT permission FROM menus WHERE type = 'button' AND permission IS NOT NULL`).all() as { permission: string }[]).map(
      (r) => r.permission,
    ),
  );

  test('the document is OpenAPI 3.1 with a bearer scheme', () => {
    expect((doc as any).openapi).toBe('3.1.0');
    expect((doc as any).components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  /** Operations the contract opens to any logged-in user, no code ("Standard modules"). */
  const ANY_LOGGED_IN = ['/app/sysDict/items', '/app/sysDict/all', '/app/sysConfig/value', '/app/sysNotice/latest', '/app/sysNotice/markRead',
    // API keys: one's own keys need no code; sys:apiKey:page/revoke reach others' (judged in SQL).
    '/app/sysApiKey/page', '/app/sysApiKey/revoke'];

  test('every /app/* operation declares a permission code (sysLoginUser and the few reads for everyone: any logged-in user)', () => {
    const missing = operations
      .filter((o) => o.path.startsWith('/app/'))
      .filter((o) => {
        const code = o.op['x-permission'];
        if (o.path.startsWith('/app/sysLoginUser/') || ANY_LOGGED_IN.includes(o.path)) return code !== 'authenticated';
        return typeof code !== 'string' || !(PERMISSION_CODES as readonly string[]).includes(code);
      })
      .map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(operations.some((o) => o.path.startsWith('/app/'))).toBe(true);
    expect(missing).toEqual([]);
  });

  test('every protected operation carries the bearer security requirement (and the API key scheme where a key may be used)', () => {
    // Downloads and previews also accept a signed link (for <img src> and <a download>); an API key
    // is offered on every operation with a code a key may carry (access/api-key-statement.ts).
    const linkable = ['/app/sysFile/download', '/app/sysImage/preview'];
    const expected = (o: (typeof operations)[number]) =>
      JSON.stringify([
        { bearerAuth: [] },
        ...(keyMayCarry(o.op['x-permission'] === 'authenticated' ? null : (o.op['x-permission'] as string)) ? [{ apiKeyAuth: [] }] : []),
        ...(linkable.includes(o.path) ? [{ signedLink: [] }] : []),
      ]);
    const unsecured = operations
      .filter((o) => o.path.startsWith('/app/') || o.path === '/auth/logout')
      .filter((o) => JSON.stringify(o.op.security) !== expected(o))
      .map((o) => o.path);
    expect(unsecured).toEqual([]);
    // Never offered where a key is refused: own account, keys, role writes and grants.
    const keyed = operations.filter((o) => JSON.stringify(o.op.security).includes('apiKeyAuth')).map((o) => o.path);
    for (const p of ['/app/sysLoginUser/updatePassword', '/app/sysApiKey/add', '/app/sysRole/grantMenu', '/app/sysUser/grantRole', '/auth/logout']) expect(keyed).not.toContain(p);
    expect(keyed).toContain('/app/sysUser/page');
    expect((doc as any).components.securitySchemes.apiKeyAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  test('every declared code is seeded as a button menu by the migrations', () => {
    const declared = operations.map((o) => o.op['x-permission']).filter((c): c is string => typeof c === 'string' && c !== 'authenticated');
    expect(declared.filter((c) => !seeded.has(c))).toEqual([]);
    // And the catalogue as a whole is seeded, so a fresh install can grant every operation.
    expect(PERMISSION_CODES.filter((c) => !seeded.has(c))).toEqual([]);
  });

  test('each seeded button hangs under a menu that hangs under a directory', () => {
    const rows = t.sqlite
      .query(`SELECT b.permission, m.type AS page_type, d.type AS dir_type FROM menus b JOIN menus m ON m.id = b.parent_id JOIN menus d ON d.id = m.parent_id WHERE b.type = 'button'`)
      .all() as { page_type: string; dir_type: string }[];
    expect(rows.length).toBe(PERMISSION_CODES.length);
    expect(rows.every((r) => r.page_type === 'menu' && r.dir_type === 'directory')).toBe(true);
  });
});

describe('docs show the permission of each operation', async () => {
  const t = await makeTestApp();
  const doc = (await (await t.app.request('/openapi.json')).json()) as any;
  test('the description names the code', () => {
    expect(doc.paths['/app/sysLoginUser/updateInfo'].post.description).toContain('logged-in user');
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        const code = op['x-permission'];
        if (code && code !== 'authenticated') expect(`${path}: ${op.description}`).toContain(`\`${code}\``);
      }
    }
  });
});
