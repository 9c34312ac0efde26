// bun bench/captcha-sheet.ts [count=20] [out=test-output/captcha-sheet.png]
// Renders `count` captchas exactly as GET /auth/captcha serves them (fresh crypto randomness, the
// default size) into one page at their native size (device scale 1, no zoom) in Debian's Chromium,
// and screenshots it: the legibility measure of issue 25 is a person reading that sheet. The
// answers go to a separate file (<out>.answers.txt) so the reader can write down what they read
// first and compare afterwards.
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { randomCaptchaText, renderCaptchaSvg } from '../src/modules/auth/captcha-render.ts';
import { cryptoRng } from '../src/modules/auth/captcha.service.ts';

const count = Number(process.argv[2] ?? 20);
const out = process.argv[3] ?? 'test-output/captcha-sheet.png';
const items = Array.from({ length: count }, () => {
  const rng = cryptoRng();
  const text = randomCaptchaText(rng);
  return { text, svg: renderCaptchaSvg(text, rng) };
});
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ deviceScaleFactor: 1, viewport: { width: 900, height: 400 } });
  // As a client shows it: an <img> of the data URL at its natural size, numbered.
  const cells = items
    .map((x, i) => `<figure style="display:inline-block;margin:6px;font:12px sans-serif"><img src="data:image/svg+xml;base64,${btoa(x.svg)}"><figcaption>${i + 1}</figcaption></figure>`)
    .join('');
  await page.setContent(`<!doctype html><body style="margin:8px;background:#fff">${cells}</body>`);
  await page.waitForFunction(() => [...document.images].every((i) => i.complete && i.naturalWidth > 0));
  await page.screenshot({ path: out, fullPage: true });
  const natural = await page.evaluate(() => [document.images[0]!.naturalWidth, document.images[0]!.naturalHeight]);
  writeFileSync(`${out}.answers.txt`, items.map((x, i) => `${i + 1} ${x.text}`).join('\n') + '\n');
  console.log(`${count} captchas at native size ${natural.join('x')} → ${out} (answers in ${out}.answers.txt)`);
} finally {
  await browser.close();
}
