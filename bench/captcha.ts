// bun bench/captcha.ts — microseconds per captcha render (SVG markup, before base64), and how
// often the markup attacks of test/support/captcha-attack.ts read a whole answer: 'structure' (the
// issue's attack, a test bound < 5 %) and 'geometry' (reading the outline coordinates as a
// picture: vector OCR; reported, not bounded). Render time is measured here, never in a test.
import { randomCaptchaText, renderCaptchaSvg } from '../src/modules/auth/captcha-render.ts';
import { buildTemplates, readCaptcha, type AttackMode } from '../test/support/captcha-attack.ts';
import { mulberry32 } from '../test/support/rng.ts';

const rng = mulberry32(1);
const texts = Array.from({ length: 3000 }, () => randomCaptchaText(rng));
for (const t of texts.slice(0, 300)) renderCaptchaSvg(t, rng);
const t0 = performance.now();
let bytes = 0;
for (const t of texts) bytes += renderCaptchaSvg(t, rng).length;
const us = ((performance.now() - t0) * 1000) / texts.length;
console.log(`captcha render: ${us.toFixed(0)} µs per captcha, ${Math.round(bytes / texts.length)} bytes of SVG on average (${texts.length} renders)`);

for (const mode of ['structure', 'geometry'] as AttackMode[]) {
  const templates = buildTemplates(mulberry32(7), 20, mode);
  const r = mulberry32(4242);
  let solved = 0, chars = 0, total = 0;
  for (let i = 0; i < 500; i++) {
    const text = randomCaptchaText(r);
    const read = readCaptcha(renderCaptchaSvg(text, r), text.length, templates);
    if (read === text) solved++;
    for (let k = 0; k < text.length; k++) if (read[k] === text[k]) chars++;
    total += text.length;
  }
  console.log(`markup attack (${mode}): ${solved}/500 solved, ${((100 * chars) / total).toFixed(0)} % of characters`);
}
