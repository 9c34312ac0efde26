// /docs in headless Chromium: the page renders the whole API from /openapi.json using only what
// the service itself serves (no CDN), under its self-only Content-Security-Policy.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { CAPTCHA_HEIGHT, CAPTCHA_WIDTH } from '../../src/modules/auth/captcha-render.ts';
import { ADMIN_PASSWORD, hasChromium, launchChromium, inChromium, outputPath, startApi, type RunningApi } from './support.ts';

let api: RunningApi;
let noCaptcha: RunningApi;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  if (!hasChromium) return;
  [api, noCaptcha, browser] = await Promise.all([startApi({}), startApi({ CAPTCHA_ENABLED: 'false' }), launchChromium()]);
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await api?.stop();
  await noCaptcha?.stop();
});

/** A /docs page that records what it loads and any console error or CSP violation. */
async function docsPage(base: string) {
  const page = await browser.context.newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(`${base}/docs`);
  await page.waitForSelector('details');
  return { page, requests, problems };
}

describe.skipIf(!hasChromium)(inChromium('/docs in Chromium'), () => {
  test('every operation is listed, nothing is loaded from elsewhere, no CSP violation, Send works', async () => {
    const { page, requests, problems } = await docsPage(api.url);
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

  // Issue 25: the first login without curl, base64 or squinting.
  test('the login helper shows the captcha as an image; a wrong code says so and brings a new one', async () => {
    const { page, problems } = await docsPage(api.url);
    const img = page.locator('#captcha-img');
    await img.waitFor({ state: 'visible' });
    const natural = () => img.evaluate((i: HTMLImageElement) => (i.complete ? [i.naturalWidth, i.naturalHeight, i.src] : null));
    await page.waitForFunction(() => (document.getElementById('captcha-img') as HTMLImageElement).naturalWidth > 0);
    const [w, h, first] = (await natural())!;
    expect([w, h]).toEqual([CAPTCHA_WIDTH, CAPTCHA_HEIGHT]);
    expect(first).toStartWith('data:image/svg+xml;base64,');
    await page.fill('#login-password', ADMIN_PASSWORD);
    await page.fill('#captcha-code', 'XXXXX');
    await page.click('#login-submit');
    await page.locator('#login-status.error', { hasText: 'verification code is wrong' }).waitFor();
    await page.waitForFunction((old) => (document.getElementById('captcha-img') as HTMLImageElement).src !== old, first);
    expect(await page.inputValue('#token')).toBe('');
    expect(await page.inputValue('#captcha-code')).toBe('');
    // "Send" on GET /auth/captcha shows the image of the answer, not only its base64.
    const captcha = page.locator('details', { has: page.locator('.p', { hasText: /^\/auth\/captcha$/ }) });
    await captcha.locator('summary').click();
    await captcha.locator('button', { hasText: 'Send' }).click();
    const shot = captcha.locator('img.shown');
    await shot.waitFor({ state: 'visible' });
    await page.waitForFunction((el) => (el as HTMLImageElement).naturalWidth > 0, await shot.elementHandle());
    expect(await shot.evaluate((i: HTMLImageElement) => [i.naturalWidth, i.naturalHeight])).toEqual([CAPTCHA_WIDTH, CAPTCHA_HEIGHT]);
    await page.screenshot({ path: outputPath('docs-login.png'), fullPage: false });
    // The one error is the wrong code's answer, which the browser reports as a failed load.
    expect(problems).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  }, 30_000);

  test('Log in fills the bearer token that Send uses; Log out revokes it', async () => {
    const { page, problems } = await docsPage(noCaptcha.url);
    expect(await page.locator('#captcha').isHidden()).toBe(true);
    await page.fill('#login-password', ADMIN_PASSWORD);
    await page.click('#login-submit');
    await page.locator('#login-status', { hasText: 'Logged in as admin' }).waitFor();
    const token = await page.inputValue('#token');
    expect(token).toMatch(/^eyJ/);
    const info = page.locator('details', { has: page.locator('.p', { hasText: /getLoginUserInformation$/ }) });
    await info.locator('summary').click();
    await info.locator('button', { hasText: 'Send' }).click();
    const out = info.locator('pre').last();
    await out.filter({ hasText: '"loginName": "admin"' }).waitFor({ timeout: 10_000 });
    expect(await out.textContent()).toStartWith('200');
    await page.click('#logout');
    await page.locator('#login-status', { hasText: 'Logged out.' }).waitFor();
    expect(await page.inputValue('#token')).toBe('');
    expect((await noCaptcha.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, token)).status).toBe(401);
    expect(problems).toEqual([]);
  }, 30_000);
});
