// RuoYi-Vue3, unmodified but for its dev proxy's target, in headless Chromium beside our Bun
// server: the groundwork for the RuoYi dialect (issue 28). Its login page must render, and the
// calls it makes must arrive at our server under the dialect's prefix (whatever the server
// answers them today). Run alone: `npx bun test test/browser/ruoyi-smoke.test.ts`. The first run
// installs the client's dependencies from npm (a few minutes); later runs reuse them (see
// test/browser/support/ruoyi-client.ts). Screenshots and the recorded calls go to
// test-output/ruoyi-smoke/ (or RUOYI_OUTPUT_DIR).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUT_DIR, hasChromium, inChromium, launchChromium, startApi, type RunningApi } from './support.ts';
import { RUOYI_TARBALL, changedClientFiles, fileSize, hasRuoyiTarball, openRecordedPage, startRuoyiClient, type RuoyiClient } from './support/ruoyi-client.ts';

const PREFIX = '/ruoyi';
const OUT = process.env.RUOYI_OUTPUT_DIR ?? join(OUTPUT_DIR, 'ruoyi-smoke');
const ready = hasChromium && hasRuoyiTarball;
const title = hasRuoyiTarball ? inChromium('RuoYi-Vue3 smoke') : `RuoYi-Vue3 smoke (skipped: ${RUOYI_TARBALL} is missing; set RUOYI_TARBALL)`;
if (!ready) console.log(`[ruoyi-smoke] ${title}`);

let api: RunningApi;
let client: RuoyiClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;
const t0 = Date.now();
const timings: Record<string, number | boolean> = {};

beforeAll(async () => {
  if (!ready) return;
  mkdirSync(OUT, { recursive: true });
  let t = Date.now();
  api = await startApi({ RUOYI_API_PREFIX: PREFIX, CAPTCHA_ENABLED: 'true', LOG_REQUESTS: 'true', LOG_LEVEL: 'info' }, { keepOutput: true });
  timings.apiStartMs = Date.now() - t;
  t = Date.now();
  [client, browser] = await Promise.all([startRuoyiClient({ baseUrl: api.url + PREFIX }), launchChromium()]);
  timings.clientReadyMs = Date.now() - t;
  Object.assign(timings, client.timings);
  console.log(`[ruoyi-smoke] client ${client.url} -> ${client.baseUrl}; install ${client.install.cold ? 'cold' : 'warm'} ${client.install.ms} ms (cold install recorded ${client.install.record.installMs} ms, ${client.install.record.lockfileEntries} lockfile entries, node ${client.install.record.node}); vite ready in ${client.timings.devServerStartMs} ms`);
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await client?.stop();
  await api?.stop();
  if (ready) {
    timings.totalMs = Date.now() - t0;
    writeFileSync(join(OUT, 'timings.json'), JSON.stringify(timings, null, 2));
    if (client) writeFileSync(join(OUT, 'vite.log'), client.output());
    console.log(`[ruoyi-smoke] ${JSON.stringify(timings)}; output in ${OUT}`);
  }
}, 60_000);

describe.skipIf(!ready)(title, () => {
  test('the login page renders and its calls reach our server under the prefix', async () => {
    const { page, calls, consoleErrors, pageErrors, assetFailures, settled } = await openRecordedPage(browser.context, client);
    page.setDefaultTimeout(60_000);
    let t = Date.now();
    // The first load makes Vite transform and pre-bundle the app's dependencies.
    const captcha = page.waitForRequest((r) => r.url().endsWith('/dev-api/captchaImage'));
    await page.goto(`${client.url}/login`);
    await page.waitForSelector('.login-form input[placeholder="密码"]', { state: 'visible' });
    await captcha;
    timings.loginPageMs = Date.now() - t;
    expect(await page.locator('.login-form .title').innerText()).toBe('若依管理系统');

    // Logging in fails until the dialect exists; the attempt still shows what the page sends.
    await page.locator('.login-form input[placeholder="账号"]').fill('admin');
    await page.locator('.login-form input[placeholder="密码"]').fill('not-the-password');
    await page.locator('.login-form input[placeholder="验证码"]').fill('1234');
    t = Date.now();
    const login = page.waitForResponse((r) => r.url().endsWith('/dev-api/login'));
    await page.locator('.login-form button').click();
    await login;
    timings.loginCallMs = Date.now() - t;
    await page.waitForTimeout(300);
    await settled();

    const screenshot = join(OUT, 'login.png');
    await page.screenshot({ path: screenshot });
    expect(fileSize(screenshot)).toBeGreaterThan(10_000);

    const served = api
      .output()
      // The server's log lines are JSON; the start-up banner is plain text for people.
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; method?: string; path?: string; status?: number; traceId?: string })
      .filter((e) => e.msg === 'request' && e.path?.startsWith(`${PREFIX}/`));
    writeFileSync(join(OUT, 'calls.json'), JSON.stringify({ browser: calls, server: served, consoleErrors, pageErrors, assetFailures }, null, 2));
    console.log(`[ruoyi-smoke] calls: ${calls.map((c) => `${c.method} ${c.path} -> ${c.status}`).join(', ')}`);

    // Both calls left the browser as /dev-api/…, went through Vite's proxy and were answered by
    // our server (its trace id on the answer), which saw them under the prefix.
    const byPath = (method: string, path: string) => calls.find((c) => c.method === method && c.path === path);
    expect(byPath('GET', '/captchaImage')?.traceId).toMatch(/^[0-9a-f]{32}$/);
    const loginCall = byPath('POST', '/login');
    expect(loginCall?.traceId).toMatch(/^[0-9a-f]{32}$/);
    // No uuid: the captcha call failed, so the page never got one (JSON.stringify drops undefined).
    expect(JSON.parse(loginCall!.requestBody!)).toEqual({ username: 'admin', password: 'not-the-password', code: '1234' });
    const traceIds = new Set(served.map((e) => e.traceId));
    for (const call of [byPath('GET', '/captchaImage')!, loginCall!]) expect(traceIds.has(call.traceId!)).toBe(true);
    expect(served.map((e) => `${e.method} ${e.path}`)).toEqual(expect.arrayContaining([`GET ${PREFIX}/captchaImage`, `POST ${PREFIX}/login`]));
    expect(assetFailures).toEqual([]);
    // Until the dialect answers, the page's failed calls end as unhandled AxiosError rejections
    // (RuoYi does not catch them); anything else thrown in the page is a real fault.
    expect(pageErrors.filter((e) => !e.startsWith('AxiosError'))).toEqual([]);
    // The one change to the client: its proxy target.
    expect(await changedClientFiles(client.appDir)).toEqual(['vite.config.js']);
    expect(readFileSync(join(client.appDir, 'vite.config.js'), 'utf8')).toContain(`const baseUrl = '${api.url}${PREFIX}'`);
  }, 180_000);
});
