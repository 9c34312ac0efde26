import { describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

// examples/adapters/ is meant to be copied into a template (docs: examples/adapters/README.md). So
// its files import nothing from this repository (a type import from ../../src broke the template's
// type check, issue 31), nothing from a package, and each other only with `import type` (a value
// import of `./common.ts` needs `allowImportingTsExtensions`, which soybean's and vben's tsconfig
// do not set). And they type-check alone, with a template's compiler options and no bun types.

const DIR = resolve(import.meta.dir, '../examples/adapters');
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

/** Every module specifier a file names: static imports and re-exports, side-effect imports, import(). */
function specifiers(source: string): { spec: string; typeOnly: boolean }[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const out: { spec: string; typeOnly: boolean }[] = [];
  for (const m of code.matchAll(/\b(import|export)(\s+type)?\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g)) out.push({ spec: m[3]!, typeOnly: !!m[2] });
  for (const m of code.matchAll(/\bimport\s*['"]([^'"]+)['"]/g)) out.push({ spec: m[1]!, typeOnly: false });
  for (const m of code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

/** What is wrong with `file`'s imports, one line each. */
function importProblems(file: string, source: string): string[] {
  const problems: string[] = [];
  for (const { spec, typeOnly } of specifiers(source)) {
    if (!spec.startsWith('./') && !spec.startsWith('../')) {
      problems.push(`${file}: '${spec}' is a package or an alias (the adapters depend on nothing)`);
      continue;
    }
    const target = resolve(DIR, dirname(file), spec);
    if (relative(DIR, target).startsWith('..')) problems.push(`${file}: '${spec}' is outside examples/adapters`);
    else if (!existsSync(target)) problems.push(`${file}: '${spec}' names no file`);
    else if (!typeOnly) problems.push(`${file}: '${spec}' is a value import (use import type, or copy the helper into the file)`);
  }
  return problems;
}

describe('examples/adapters are self-contained', () => {
  test('there are adapters to check', () => {
    expect(files.sort()).toEqual(['common.ts', 'ruoyi.ts', 'soybean.ts']);
  });

  test('no import from outside examples/adapters, from a package, or of a value across files', () => {
    expect(files.flatMap((f) => importProblems(f, readFileSync(join(DIR, f), 'utf8')))).toEqual([]);
  });

  test('the check catches what it should', () => {
    expect(importProblems('common.ts', "import type { LoginUserInformation, MenuNode } from '../../src/client.ts';")).toEqual([
      "common.ts: '../../src/client.ts' is outside examples/adapters",
    ]);
    expect(importProblems('x.ts', "import { z } from 'zod';\nexport { a } from '#/api';")).toHaveLength(2);
    expect(importProblems('soybean.ts', "import { firstPage, type MenuNode } from './common.ts';")[0]).toContain('value import');
    expect(importProblems('soybean.ts', "const t = await import('../../src/client.ts');")[0]).toContain('outside');
    expect(importProblems('soybean.ts', "import type { MenuNode } from './common.ts';\n// import { x } from '../../src/a.ts';")).toEqual([]);
  });

  test('they type-check alone, with a template tsconfig (strict, unused locals, no bun or node types)', () => {
    const tsc = resolve(import.meta.dir, '../node_modules/.bin/tsc');
    expect(existsSync(tsc)).toBe(true);
    const tmp = mkdtempSync(join(tmpdir(), 'adapters-alone-'));
    try {
      for (const f of files) copyFileSync(join(DIR, f), join(tmp, f));
      const compilerOptions = {
        target: 'ESNext',
        module: 'ESNext',
        moduleResolution: 'bundler',
        lib: ['ESNext', 'DOM', 'DOM.Iterable'],
        types: [],
        strict: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        noUncheckedIndexedAccess: true,
        isolatedModules: true,
        verbatimModuleSyntax: true,
        skipLibCheck: true,
        noEmit: true,
      };
      writeFileSync(join(tmp, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
      const r = spawnSync(tsc, ['-p', tmp], { encoding: 'utf8' });
      expect(`${r.status} ${r.stdout}${r.stderr}`.trim()).toBe('0');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);
});
