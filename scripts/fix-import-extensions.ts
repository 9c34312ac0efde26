// Adds the `.ts` extension to every relative import that lacks it, so Bun, Deno, Node and
// wrangler/esbuild all resolve the same file with no loader hook or resolver setting:
//   npx bun scripts/fix-import-extensions.ts          rewrite in place (idempotent), print the files changed
//   npx bun scripts/fix-import-extensions.ts --check  change nothing, exit 1 if a file needs it
// `./x` becomes `./x.ts` when that file exists, or `./x/index.ts`; anything else (a `.js`, `.json`,
// `.wasm` file, a specifier that resolves to nothing) is left as it is.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

/** Where the project's TypeScript lives (node_modules and generated output are never entered). */
export const SOURCE_DIRS = ['src', 'test', 'scripts', 'bench', 'examples'];

/**
 * `from '…'`, `import '…'`, `import('…')`, `require('…')` and `export … from '…'` with a relative specifier:
 * group 1 is everything before the specifier, 2 the quote, 3 the specifier.
 */
export const RELATIVE_IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"\n]*)\2/g;

/** The specifier as it should be written, or null when it already names a file or resolves to none. */
export function withExtension(fromFile: string, spec: string): string | null {
  if (/\.[cm]?[jt]sx?$|\.json$|\.wasm$|\.sql$/.test(spec)) return null;
  const base = resolve(dirname(fromFile), spec);
  if (existsSync(`${base}.ts`)) return `${spec}.ts`;
  if (existsSync(`${base}.tsx`)) return `${spec}.tsx`;
  if (existsSync(join(base, 'index.ts'))) return `${spec.replace(/\/$/, '')}/index.ts`;
  return null;
}

/** The file's text with every fixable specifier rewritten, plus the ones left without an extension. */
export function rewrite(file: string, text: string): { text: string; unresolved: string[] } {
  const unresolved: string[] = [];
  const out = text.replace(RELATIVE_IMPORT, (whole, head: string, q: string, spec: string) => {
    const fixed = withExtension(file, spec);
    if (fixed) return `${head}${q}${fixed}${q}`;
    if (!/\.[a-z0-9]+$/i.test(spec)) unresolved.push(spec);
    return whole;
  });
  return { text: out, unresolved };
}

/** Every .ts/.tsx file under the source folders of `root`. */
export function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(join(root, d))) walk(join(root, d));
  return files;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const check = process.argv.includes('--check');
  let changed = 0;
  for (const file of sourceFiles(root)) {
    const before = readFileSync(file, 'utf8');
    const { text, unresolved } = rewrite(file, before);
    for (const spec of unresolved) console.error(`${file.slice(root.length + 1)}: cannot resolve ${spec}`);
    if (text === before) continue;
    changed++;
    console.log(file.slice(root.length + 1));
    if (!check) writeFileSync(file, text);
  }
  console.log(`${changed} file(s) ${check ? 'need' : 'got'} .ts extensions`);
  if (check && changed) process.exit(1);
}
