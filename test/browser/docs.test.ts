// /docs in headless Chromium: the page renders the whole API from /openapi.json using only what
// the service itself serves (no CDN), under its self-only Content-Security-Policy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { hasChromium, launchChromium, inChromium, outputPath, startApi, type RunningApi } from './support.ts';

let api: RunningApi;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  if (!hasChromium) return;
  [api, browser] = await Promise.all([startApi({}), launchChromium()]);
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await api?.stop();
});

describe.skipIf(!hasChromium)(inChromium('/docs in Chromium'), () => {
  test('every operation is listed, nothing is loaded from elsewhere, no CSP violation, Send works', async () => {
    const page = await browser.context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(String(e)));
    await page.goto(`${api.url}/docs`);
    await page.waitForSelector('details');
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, object> };
    const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(await page.locator('details').count()).toBe(operations);
    expect(await page.locator('.perm', { hasText: 'sys:user:add' }).count()).toBe(1);

    await page.fill('#filter', 'sysUser/add');
    expect(await page.locator('details:visible').count()).toBe(1);
    await page.fill('#filter', '');

    const health = page.locator('details', { has: page.locator('.p', { hasText: /^\/health$/ }) });
    await health.locator('summary').click();
    await health.locator('button', { hasText: 'Send' }).click();
    const out = health.locator('pre').last();
    await out.filter({ hasText: '"ok": true' }).waitFor({ timeout: 10_000 });
    expect(await out.textContent()).toStartWith('200');
    await page.screenshot({ path: outputPath('docs.png'), fullPage: false });

    expect(requests.filter((u) => !u.startsWith(api.url))).toEqual([]);
    expect(problems).toEqual([]);
  }, 30_000);
});
