// bun bench/captcha.ts — microseconds per captcha render (SVG markup, before base64), and how
// often the attacks on it read a whole answer: the markup attacks of test/support/captcha-attack.ts,
// 'structure' (the attack) and 'geometry' (reading the outline coordinates as a picture:
// vector OCR), both test bounds < 5 %; and 'raster' (test/support/captcha-raster.ts: the path
// filled by winding numbers as a browser fills it, cleaned, cut into glyphs, nearest neighbours
// among glyphs of known captchas). Render time is measured here, never in a test.
import { randomCaptchaText, renderCaptchaSvg } from '../src/modules/auth/captcha-render.ts';
import { buildTemplates, readCaptcha, type AttackMode } from '../test/support/captcha-attack.ts';
import { buildRasterTemplates, readCaptchaRaster } from '../test/support/captcha-raster.ts';
import { mulberry32 } from '../test/support/rng.ts';

const rng = mulberry32(1);
const texts = Array.from({ length: 3000 }, () => randomCaptchaText(rng));
for (const t of texts.slice(0, 300)) renderCaptchaSvg(t, rng);
const t0 = performance.now();
let bytes = 0;
for (const t of texts) bytes += renderCaptchaSvg(t, rng).length;
const us = ((performance.now() - t0) * 1000) / texts.length;
console.log(`captcha render: ${us.toFixed(0)} µs per captcha, ${Math.round(bytes / texts.length)} bytes of SVG on average (${texts.length} renders)`);

const only = process.argv[2]?.split(',');
for (const mode of ['structure', 'geometry', 'raster'] as const) {
  if (only && !only.includes(mode)) continue;
  const read =
    mode === 'raster'
      ? ((t) => (svg: string, n: number) => readCaptchaRaster(svg, n, t))(buildRasterTemplates(mulberry32(7), 800))
      : ((t) => (svg: string, n: number) => readCaptcha(svg, n, t))(buildTemplates(mulberry32(7), 20, mode as AttackMode));
  const r = mulberry32(4242);
  let solved = 0, chars = 0, total = 0;
  for (let i = 0; i < 500; i++) {
    const text = randomCaptchaText(r);
    const got = read(renderCaptchaSvg(text, r), text.length);
    if (got === text) solved++;
    for (let k = 0; k < text.length; k++) if (got[k] === text[k]) chars++;
    total += text.length;
  }
  console.log(`attack (${mode}): ${solved}/500 solved, ${((100 * chars) / total).toFixed(0)} % of characters`);
}
