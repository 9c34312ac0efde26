// The example SPA (examples/spa) in headless Chromium against the real Bun server, each on its own
// origin, so every call is a real cross-origin fetch under CORS.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { BrowserContext, Page } from 'playwright-core';
import { serveSpa } from '../../examples/spa/serve.ts';
import { ADMIN_PASSWORD, hasChromium, launchChromium, inChromium, outputPath, startApi, type RunningApi } from './support.ts';

let spa: ReturnType<typeof serveSpa>;
let stranger: ReturnType<typeof serveSpa>;
let withCaptcha: RunningApi;
let noCaptcha: RunningApi;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;
const origin = (s: { port?: number | undefined }) => `http://127.0.0.1:${s.port}`;

beforeAll(async () => {
  if (!hasChromium) return;
  spa = serveSpa({ port: 0 });
  // A third origin serving the same page, deliberately missing from CORS_ORIGINS.
  stranger = serveSpa({ port: 0 });
  const cors = { CORS_ORIGINS: origin(spa) };
  [withCaptcha, noCaptcha, browser] = await Promise.all([
    startApi({ ...cors, CAPTCHA_ENABLED: 'true' }),
    startApi({ ...cors, CAPTCHA_ENABLED: 'false' }),
    launchChromium(),
  ]);
  context = browser.context;
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([withCaptcha?.stop(), noCaptcha?.stop()]);
  spa?.stop(true);
  stranger?.stop(true);
});

async function open(api: RunningApi, extra = ''): Promise<Page> {
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(`${origin(spa)}/?api=${encodeURIComponent(api.url)}${extra}`);
  return page;
}

const visible = (page: Page, selector: string) => page.locator(selector).isVisible();

/** A small real PNG, drawn by the browser itself. */
async function pngFromCanvas(page: Page): Promise<Buffer> {
  const dataUrl = await page.evaluate(() => {
    const c = document.createElement('canvas');
    c.width = 48;
    c.height = 32;
    const ctx = c.getContext('2d')!;
    ctx.fillStyle = '#3c5a8a';
    ctx.fillRect(0, 0, 48, 32);
    ctx.fillStyle = '#f4b400';
    ctx.fillRect(8, 12, 8, 16);
    ctx.fillRect(20, 6, 8, 22);
    ctx.fillRect(32, 16, 8, 12);
    return c.toDataURL('image/png');
  });
  return Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
}

describe.skipIf(!hasChromium)(inChromium('example SPA in Chromium'), () => {
  test('captcha: a 120x40 image; a wrong code shows the envelope msg and a fresh code', async () => {
    const page = await open(withCaptcha);
    await page.waitForSelector('#captcha-img[src^="data:image/svg+xml;base64,"]', { state: 'visible' });
    const size = await page.$eval('#captcha-img', (img) => {
      const i = img as HTMLImageElement;
      return i.decode().then(() => [i.naturalWidth, i.naturalHeight]);
    });
    expect(size).toEqual([120, 40]);
    const firstImage = await page.getAttribute('#captcha-img', 'src');

    await page.fill('#login-name', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.fill('#security-code', 'QQQQ');
    const answer = page.waitForResponse((r) => r.url().endsWith('/auth/login'));
    await page.click('#login-submit');
    const res = await answer;
    const body = await res.json();
    expect(res.status()).toBe(400);
    expect(body.msg).toBeTruthy();
    await page.waitForSelector('#login-error', { state: 'visible' });
    expect(await page.textContent('#login-error')).toBe(body.msg);
    await page.screenshot({ path: outputPath('spa-login-error.png') });
    // The attempt consumed the code; the page asked for another one.
    await page.waitForFunction((old) => (document.getElementById('captcha-img') as HTMLImageElement).src !== old, firstImage);
    expect(await page.getAttribute('body', 'data-view')).toBe('login');
    await page.close();
  });

  test('with the captcha disabled by configuration: log in, see who, menus, users, image; log out', async () => {
    // Two more users so that a page size of 2 gives two pages.
    const adminToken = await noCaptcha.login();
    for (const loginName of ['alice', 'bob']) {
      const r = await noCaptcha.call('POST', '/app/sysUser/add', { loginName, password: `${loginName}-Passw0rd-x`, nickName: loginName.toUpperCase() }, adminToken);
      expect(r.status).toBe(200);
    }
    const info = (await noCaptcha.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, adminToken)).json.data;

    const page = await open(noCaptcha, '&pageSize=2');
    await page.waitForSelector('#login-form', { state: 'visible' });
    expect(await visible(page, '#captcha-row')).toBe(false);
    await page.fill('#login-name', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('#login-submit');
    await page.waitForSelector('body[data-ready="true"]');

    expect(await page.textContent('#nick-name')).toBe(info.user.nickName);
    expect(await page.textContent('#role-codes')).toBe('superAdmin');

    // The menu tree: same titles, same nesting as getLoginUserInformation.
    const tree = await page.$eval('#menu-tree', (root) => {
      const walk = (ul: Element): unknown[] =>
        [...ul.children].map((li) => ({
          title: li.querySelector(':scope > .menu-title')?.textContent,
          children: li.querySelector(':scope > ul') ? walk(li.querySelector(':scope > ul')!) : [],
        }));
      return walk(root);
    });
    type Menu = { title: string; children: Menu[] };
    const strip = (ms: Menu[]): unknown[] => ms.map((m) => ({ title: m.title, children: strip(m.children) }));
    expect(tree).toEqual(strip(info.menus));
    expect((tree as Menu[]).some((m) => m.children.length > 0)).toBe(true);

    // The user list pages through sysUser/page.
    const rowNames = () => page.$$eval('#users-body tr', (trs) => trs.map((tr) => tr.children[1]!.textContent));
    expect(await page.textContent('#users-page-info')).toBe('Page 1 of 2 (3 users)');
    const first = await rowNames();
    expect(first).toHaveLength(2);
    await page.click('#users-next');
    await page.waitForSelector('text=Page 2 of 2 (3 users)');
    const second = await rowNames();
    expect(second).toHaveLength(1);
    expect([...first, ...second].sort()).toEqual(['admin', 'alice', 'bob']);
    expect(await page.isDisabled('#users-next')).toBe(true);
    await page.click('#users-prev');
    await page.waitForSelector('text=Page 1 of 2 (3 users)');

    // An image uploaded from the page (multipart, cross-origin) shows through its signed url.
    expect(await page.textContent('#image-note')).toBe('');
    expect(await visible(page, '#image-figure')).toBe(false);
    await page.setInputFiles('#image-upload', { name: 'chart.png', mimeType: 'image/png', buffer: await pngFromCanvas(page) });
    await page.waitForFunction(() => (document.getElementById('image-preview') as HTMLImageElement).naturalWidth > 0);
    const shown = await page.$eval('#image-preview', (img) => ({ src: (img as HTMLImageElement).src, w: (img as HTMLImageElement).naturalWidth, h: (img as HTMLImageElement).naturalHeight }));
    expect(shown).toMatchObject({ w: 48, h: 32 });
    expect(shown.src.startsWith(`${noCaptcha.url}/app/sysImage/preview?`)).toBe(true);
    expect(shown.src).toContain('sig=');
    expect(await page.textContent('#image-caption')).toBe('chart.png — 48×32');
    // The link alone is the credential: it loads with no Authorization header at all.
    expect((await fetch(shown.src)).status).toBe(200);

    // After a reload the page finds it again as the first record of sysImage/page.
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => (document.getElementById('image-preview') as HTMLImageElement).naturalWidth > 0);

    await page.screenshot({ path: outputPath('spa-logged-in.png'), fullPage: true });

    // Log out: back to the login form, and the token is dead on the server too.
    const token = await page.evaluate(() => Object.entries(sessionStorage).find(([k]) => k.startsWith('edge-admin-token@'))?.[1]);
    expect(token).toBeTruthy();
    await page.click('#logout');
    await page.waitForSelector('#login-form', { state: 'visible' });
    expect(await page.getAttribute('body', 'data-view')).toBe('login');
    expect(await visible(page, '#app-view')).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect((await noCaptcha.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, token)).status).toBe(401);
    await page.close();
  });

  test('read replication: the SPA sends back the newest X-D1-Bookmark it was given (through CORS)', async () => {
    // The Bun API has no replicas and sends no bookmark: the answers get one added on the way, as
    // a replicated D1 deployment would send them. The API's CORS must expose and allow the header.
    const older = `00000001-00000000-00000000-${'0'.repeat(32)}`;
    const newer = `00000002-00000000-00000000-${'0'.repeat(32)}`;
    const page = await open(noCaptcha);
    await page.route(`${noCaptcha.url}/**`, async (route) => {
      if (route.request().method() === 'OPTIONS') return route.continue();
      const response = await route.fetch();
      const path = new URL(route.request().url()).pathname;
      const bookmark = path === '/auth/login' ? newer : older;
      await route.fulfill({ response, headers: { ...response.headers(), 'x-d1-bookmark': bookmark } });
    });
    const sent: [string, string | undefined][] = [];
    page.on('request', (r) => {
      // The SPA's fetches (an <img src> preview cannot carry headers: it reads by signed link).
      if (r.url().startsWith(noCaptcha.url) && r.method() !== 'OPTIONS' && r.resourceType() === 'fetch') sent.push([new URL(r.url()).pathname, r.headers()['x-d1-bookmark']]);
    });
    await page.waitForSelector('#login-form', { state: 'visible' });
    await page.fill('#login-name', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('#login-submit');
    await page.waitForSelector('body[data-ready="true"]');
    const login = sent.findIndex(([p]) => p === '/auth/login');
    expect(login).toBeGreaterThanOrEqual(0);
    const after = sent.slice(login + 1);
    expect(after.length).toBeGreaterThan(1);
    // Every request after the login carries the login's (newer) bookmark, never the older ones
    // the reads answered with.
    expect(after).toEqual(after.map(([p]) => [p, newer] as [string, string]));
    // Logging out forgets the token; a bookmark is no secret (the next answers bring a new one).
    await page.click('#logout');
    await page.waitForSelector('#login-form', { state: 'visible' });
    expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('edge-admin-token')))).toEqual([]);
    await page.close();
  });

  test('a page on an origin missing from CORS_ORIGINS cannot read the API; the listed origin can', async () => {
    const probe = (api: string) =>
      fetch(`${api}/health`).then(
        (r) => `ok ${r.status}`,
        (e: Error) => e.name,
      );
    const allowed = await open(noCaptcha);
    expect(await allowed.evaluate(probe, noCaptcha.url)).toBe('ok 200');
    await allowed.close();

    const page = await context.newPage();
    await page.goto(`${origin(stranger)}/?api=${encodeURIComponent(noCaptcha.url)}`);
    expect(await page.evaluate(probe, noCaptcha.url)).toBe('TypeError');
    // The SPA itself is stuck too: its captcha request never gets through.
    await page.waitForSelector('#login-error', { state: 'visible' });
    expect(await page.textContent('#login-error')).toBe('Failed to fetch');
    await page.close();
  });
});
