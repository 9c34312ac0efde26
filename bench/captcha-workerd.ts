// bun bench/captcha-workerd.ts — microseconds per captcha render inside workerd (the Workers
// runtime). workerd's clocks stand still while a request computes, so the time is taken from
// outside: one request renders N captchas, another renders none, and the difference of their wall
// times (median of several rounds) divided by N is the cost of one render.
import { Miniflare } from 'miniflare';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'captcha-workerd-'));
const entry = join(dir, 'entry.ts');
writeFileSync(
  entry,
  `import { randomCaptchaText, renderCaptchaSvg } from ${JSON.stringify(resolve(import.meta.dir, '../src/modules/auth/captcha-render.ts'))};
export default {
  async fetch(req) {
    const n = Number(new URL(req.url).searchParams.get('n') ?? '0');
    let bytes = 0;
    for (let i = 0; i < n; i++) bytes += renderCaptchaSvg(randomCaptchaText(Math.random), Math.random).length;
    return new Response(String(bytes));
  },
};`,
);
const built = await Bun.build({ entrypoints: [entry], outdir: dir, target: 'browser', format: 'esm' });
if (!built.success) throw new Error(built.logs.join('\n'));
const mf = new Miniflare({ modules: true, script: readFileSync(built.outputs[0]!.path, 'utf8'), compatibilityDate: '2025-09-01' });
try {
  const time = async (n: number) => {
    const t0 = performance.now();
    const res = await mf.dispatchFetch(`http://bench/?n=${n}`);
    await res.text();
    return performance.now() - t0;
  };
  const N = 2000;
  await time(300); // warm-up: JIT and the glyph tables
  const base: number[] = [];
  const full: number[] = [];
  for (let round = 0; round < 7; round++) {
    base.push(await time(0));
    full.push(await time(N));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  const us = ((median(full) - median(base)) * 1000) / N;
  console.log(`captcha render in workerd: ${us.toFixed(0)} µs per captcha (median of 7 rounds of ${N}; request overhead ${median(base).toFixed(1)} ms subtracted)`);
} finally {
  await mf.dispose();
  rmSync(dir, { recursive: true, force: true });
}
