import { describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { RELATIVE_IMPORT, rewrite, sourceFiles, withExtension } from '../scripts/fix-import-extensions.ts';
import { ROOT } from '../scripts/server-commands.ts';

// Node and Deno resolve a relative import only by its full file name (no loader hook, no resolver
// setting), so every relative import in the project carries its extension.
describe('relative imports name their file', () => {
  test('no extensionless relative import in src, test, scripts, bench or examples', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(ROOT)) {
      for (const m of readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)) {
        // A specifier that names no file (sample text inside a test) is the typechecker's business.
        if (withExtension(file, m[3]!)) offenders.push(`${relative(ROOT, file)}: ${m[3]}`);
      }
    }
    // Fix with: npx bun scripts/fix-import-extensions.ts
    expect(offenders).toEqual([]);
  });

  test('the codemod adds .ts or /index.ts, leaves other specifiers, and is idempotent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'codemod-'));
    try {
      mkdirSync(join(dir, 'lib'));
      writeFileSync(join(dir, 'a.ts'), '');
      writeFileSync(join(dir, 'lib', 'index.ts'), '');
      const q = "'";
      const source = [
        `import { a } from ${q}./a${q};`,
        `import type { B } from ${q}./lib${q};`,
        `export * from ${q}./a${q};`,
        `const m = await import(${q}./a${q});`,
        `import data from ${q}./data.json${q};`,
        `import { x } from ${q}hono${q};`,
        `import { y } from ${q}./a.ts${q};`,
      ].join('\n');
      const once = rewrite(join(dir, 'main.ts'), source);
      expect(once.text.split('\n')).toEqual([
        `import { a } from ${q}./a.ts${q};`,
        `import type { B } from ${q}./lib/index.ts${q};`,
        `export * from ${q}./a.ts${q};`,
        `const m = await import(${q}./a.ts${q});`,
        `import data from ${q}./data.json${q};`,
        `import { x } from ${q}hono${q};`,
        `import { y } from ${q}./a.ts${q};`,
      ]);
      expect(rewrite(join(dir, 'main.ts'), once.text).text).toBe(once.text);
      expect(rewrite(join(dir, 'main.ts'), `import { z } from ${q}./missing${q};`).unresolved).toEqual(['./missing']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
