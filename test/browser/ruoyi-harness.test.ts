// The RuoYi client harness's one edit to the client (no browser needed): pointViteConfigAt may
// change the `baseUrl` line of vite.config.js and nothing else, and refuses when it cannot.
import { describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pointViteConfigAt } from './support/ruoyi-client.ts';

const CONFIG = `import { defineConfig } from 'vite'

const baseUrl = 'http://localhost:8080' // 后端接口

export default defineConfig(() => ({
  server: { proxy: { '/dev-api': { target: baseUrl, rewrite: (p) => p.replace(/^\\/dev-api/, '') } } }
}))
`;

function withConfig(text: string, body: (dir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'ruoyi-harness-'));
  try {
    writeFileSync(join(dir, 'vite.config.js'), text);
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('pointViteConfigAt', () => {
  test('changes the baseUrl line only, comment kept', () =>
    withConfig(CONFIG, (dir) => {
      pointViteConfigAt(dir, 'http://127.0.0.1:3000/ruoyi');
      const after = readFileSync(join(dir, 'vite.config.js'), 'utf8').split('\n');
      const before = CONFIG.split('\n');
      expect(after.length).toBe(before.length);
      const changed = after.map((line, i) => [line, before[i]]).filter(([a, b]) => a !== b);
      expect(changed).toEqual([["const baseUrl = 'http://127.0.0.1:3000/ruoyi' // 后端接口", "const baseUrl = 'http://localhost:8080' // 后端接口"]]);
    }));

  test('refuses a config without exactly one baseUrl line, and leaves it alone', () => {
    for (const text of [CONFIG.replace('const baseUrl', 'let baseUrl'), CONFIG + "const baseUrl = 'http://x'\n"]) {
      withConfig(text, (dir) => {
        expect(() => pointViteConfigAt(dir, 'http://127.0.0.1:3000/ruoyi')).toThrow(/expected one/);
        expect(readFileSync(join(dir, 'vite.config.js'), 'utf8')).toBe(text);
      });
    }
  });

  test('refuses a URL that would break out of the string literal', () =>
    withConfig(CONFIG, (dir) => {
      for (const url of ["http://x/'; evil()//", 'javascript:alert(1)', 'http://a b/']) {
        expect(() => pointViteConfigAt(dir, url)).toThrow(/plain http/);
      }
      expect(readFileSync(join(dir, 'vite.config.js'), 'utf8')).toBe(CONFIG);
    }));
});
