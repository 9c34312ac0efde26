// The example console (examples/spa) in headless Chromium against the real Bun server, each on its
// own origin, so every call is a real cross-origin fetch under CORS. Page by page: every sidebar
// entry shows its data and does one write, checked on the server afterwards.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { BrowserContext, Page } from 'playwright-core';
import { serveSpa } from '../../examples/spa/serve.ts';
import { CAPTCHA_HEIGHT, CAPTCHA_WIDTH } from '../../src/modules/auth/captcha-render.ts';
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
async function pngFromCanvas(page: Page, w = 48, h = 32): Promise<Buffer> {
  const dataUrl = await page.evaluate(
    ([w, h]) => {
      const c = document.createElement('canvas');
      c.width = w!;
      c.height = h!;
      const ctx = c.getContext('2d')!;
      ctx.fillStyle = '#3c5a8a';
      ctx.fillRect(0, 0, w!, h!);
      ctx.fillStyle = '#f4b400';
      ctx.fillRect(8, 12, 8, 16);
      ctx.fillRect(20, 6, 8, 14);
      return c.toDataURL('image/png');
    },
    [w, h],
  );
  return Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
}

async function logIn(page: Page) {
  await page.waitForSelector('#login-form', { state: 'visible' });
  await page.fill('#login-name', 'admin');
  await page.fill('#password', ADMIN_PASSWORD);
  await page.click('#login-submit');
  await page.waitForSelector('body[data-ready]');
}

describe.skipIf(!hasChromium)(inChromium('example SPA in Chromium: login'), () => {
  test(`captcha: a ${CAPTCHA_WIDTH}x${CAPTCHA_HEIGHT} image; a wrong code shows the envelope msg and a fresh code`, async () => {
    const page = await open(withCaptcha);
    await page.waitForSelector('#captcha-img[src^="data:image/svg+xml;base64,"]', { state: 'visible' });
    const size = await page.$eval('#captcha-img', (img) => {
      const i = img as HTMLImageElement;
      return i.decode().then(() => [i.naturalWidth, i.naturalHeight, i.width]);
    });
    // Shown at its own (legible) size, not squeezed.
    expect(size).toEqual([CAPTCHA_WIDTH, CAPTCHA_HEIGHT, CAPTCHA_WIDTH]);
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
    await logIn(page);
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

// --- page by page --------------------------------------------------------------------------------

let page: Page;
let token: string;
/** Server-side calls for setup and checks, as admin (a session of its own, not the browser's). */
const as = async (method: string, path: string, body?: unknown) => {
  const r = await noCaptcha.call(method, path, body, token);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.json.msg}`);
  return r.json.data;
};
const upload = async (kind: 'sysFile' | 'sysImage', name: string, type: string, bytes: Uint8Array) => {
  const form = new FormData();
  form.append('file', new File([bytes as BlobPart], name, { type }));
  const res = await fetch(`${noCaptcha.url}/app/${kind}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  expect(res.status).toBe(200);
};

/** Opens a sidebar entry by its title; resolves once the page has rendered its data. */
async function visit(title: string, path: string) {
  await page.click(`#sidebar a:text-is("${title}")`);
  await page.waitForSelector(`body[data-ready="${path}"]`);
  expect(await page.textContent('#page-title')).toBe(title);
  expect(await page.locator('#page .error').count()).toBe(0);
}
const cells = (column: number) => page.$$eval(`#page table.data tbody tr`, (trs, c) => trs.map((tr) => tr.children[c]?.textContent ?? ''), column);
const rowOf = (text: string) => page.locator('#page table.data tbody tr', { hasText: text });
/** Fills the open dialog's fields by label and saves; waits for it to close. */
async function saveDialog(fields: Record<string, string>) {
  await page.waitForSelector('#dialog[open]');
  for (const [label, value] of Object.entries(fields)) {
    const field = page.locator('#dialog-body label', { hasText: label }).locator('input, select').first();
    if ((await field.evaluate((e) => e.tagName)) === 'SELECT') await field.selectOption({ label: value });
    else await field.fill(value);
  }
  await submitDialog();
}
/** Saves the open dialog; its error message (the envelope's msg) fails the test. */
async function submitDialog() {
  await page.click('#dialog-ok');
  await page.waitForFunction(() => !(document.getElementById('dialog') as HTMLDialogElement).open || !document.getElementById('dialog-error')!.hidden);
  const error = await page.locator('#dialog-error').textContent();
  if (await page.locator('#dialog-error').isVisible()) throw new Error(`the dialog refused: ${error}`);
}

const SIDEBAR = [
  ['User management', [['Users', '/user/list'], ['Organisations', '/user/org']]],
  ['Permission management', [['Roles', '/permission/role'], ['Menus', '/permission/menu']]],
  [
    'System management',
    [
      ['Files', '/system/file'],
      ['Images', '/system/image'],
      ['Login log', '/system/loginLog'],
      ['Operation log', '/system/opLog'],
      ['Online users', '/system/online'],
      ['Backups', '/system/backup'],
    ],
  ],
] as const;

describe.skipIf(!hasChromium)(inChromium('example SPA in Chromium: every sidebar entry'), () => {
  beforeAll(async () => {
    if (!hasChromium) return;
    token = await noCaptcha.login();
    // Something on every page before the browser comes: users for two pages of 2, an
    // organisation, a role without menus, a file, an image, a backup (the logs fill themselves).
    for (const loginName of ['alice', 'bob']) await as('POST', '/app/sysUser/add', { loginName, password: `${loginName}-Passw0rd-x`, nickName: loginName.toUpperCase() });
    await as('POST', '/app/sysOrg/add', { parentId: 0, name: 'Head office', code: 'HQ' });
    await as('POST', '/app/sysRole/add', { name: 'Auditor', code: 'auditor', dataScope: 'self' });
    await upload('sysFile', 'notes.txt', 'text/plain', new TextEncoder().encode('first notes'));
    page = await open(noCaptcha, '&pageSize=2');
    page.on('dialog', (d) => void d.accept());
    await upload('sysImage', 'seed.png', 'image/png', await pngFromCanvas(page, 20, 10));
    await as('POST', '/app/sysBackup/create');
  }, 60_000);

  test('log in: the sidebar is the menu tree the server grants, every entry a page of this console', async () => {
    await logIn(page);
    expect(await page.textContent('#role-codes')).toBe('superAdmin');
    const sidebar = await page.$$eval('#sidebar > ul > li.group', (groups) =>
      groups.map((g) => [g.querySelector('.group-title')!.textContent, [...g.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('data-path')])]),
    );
    expect(sidebar).toEqual(SIDEBAR.map(([group, entries]) => [group, entries.map(([t, p]) => [t, p])]));
    // The first entry opened by itself.
    expect(await page.getAttribute('body', 'data-ready')).toBe('/user/list');
  });

  test('Users: pages through the users; adds one', async () => {
    await visit('Users', '/user/list');
    expect(await page.textContent('.page-info')).toBe('Page 1 of 2 (3)');
    const first = await cells(1);
    await page.click('.pager button:text-is("Next")');
    await page.waitForSelector('text=Page 2 of 2 (3)');
    expect([...first, ...(await cells(1))].sort()).toEqual(['admin', 'alice', 'bob']);
    await page.click('button:text-is("Add user")');
    await saveDialog({ 'Login name': 'carol', Password: 'Carol-Passw0rd-x', 'Nick name': 'Carol', Organisation: 'Head office' });
    await page.waitForSelector('text=User added.');
    const carol = (await as('POST', '/app/sysUser/page', { params: { loginName: 'carol' } })).records[0];
    expect(carol).toMatchObject({ loginName: 'carol', nickName: 'Carol', orgName: 'Head office' });
  });

  test('Organisations: shows the tree; adds a branch under the head office', async () => {
    await visit('Organisations', '/user/org');
    expect(await cells(0)).toEqual(['Head office']);
    await rowOf('Head office').locator('button:text-is("Add child")').click();
    await saveDialog({ Name: 'East branch', Code: 'EAST' });
    await page.waitForSelector('#page td:has-text("East branch")');
    expect(await cells(0)).toEqual(['Head office', '└ East branch']);
    const tree = await as('GET', '/app/sysOrg/tree');
    expect(tree[0].children.map((o: { name: string }) => o.name)).toEqual(['East branch']);
  });

  test('Roles: lists the roles; grants menus to one', async () => {
    await visit('Roles', '/permission/role');
    expect((await cells(1)).sort()).toEqual(['auditor', 'superAdmin']);
    await rowOf('auditor').locator('button:text-is("Menus")').click();
    await page.waitForSelector('#dialog[open]');
    // The whole menu tree, buttons with their codes; tick the login log and its page button.
    await page.locator('#dialog-body label.check', { hasText: /^ ?Login log$/ }).locator('input').check();
    await page.locator('#dialog-body label.check', { hasText: '[sys:loginLog:page]' }).locator('input').check();
    await submitDialog();
    await page.waitForSelector('text=Menus granted to Auditor.');
    const auditor = (await as('GET', '/app/sysRole/list')).find((r: { code: string }) => r.code === 'auditor');
    const menus = flat(await as('GET', '/app/sysMenu/tree'));
    const granted = (await as('GET', `/app/sysRole/ownMenu?id=${auditor.id}`)) as number[];
    expect(granted.map((id) => menus.get(id)).sort()).toEqual(['Login log', 'sys:loginLog:page']);
  });

  test('Menus: shows the menu tree with buttons; adds a menu', async () => {
    await visit('Menus', '/permission/menu');
    const titles = await cells(0);
    expect(titles).toContain('User management');
    expect(titles).toContain('  └ Users'.trim());
    expect((await cells(2)).filter((c) => c.startsWith('sys:')).length).toBeGreaterThan(20);
    await rowOf('System management').first().locator('button:text-is("Add child")').click();
    await saveDialog({ Title: 'Reports', 'Route name': 'Reports', Path: '/system/reports', Component: 'system/Reports' });
    await page.waitForSelector('#page td:has-text("Reports")');
    expect([...flat(await as('GET', '/app/sysMenu/tree')).values()]).toContain('Reports');
  });

  test('Files: lists the uploaded file with a working link; uploads one', async () => {
    await visit('Files', '/system/file');
    expect(await cells(0)).toEqual(['notes.txt']);
    const href = await rowOf('notes.txt').locator('a:text-is("Download")').getAttribute('href');
    // The signed link alone is the credential.
    expect(await (await fetch(href!)).text()).toBe('first notes');
    await page.setInputFiles('#page input[type=file]', { name: 'report.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n') });
    await page.waitForSelector('text=Uploaded report.csv.');
    await page.waitForSelector('#page td:text-is("report.csv")');
    expect((await as('POST', '/app/sysFile/page', {})).total).toBe(2);
  });

  test('Images: shows thumbnails through signed links; uploads one', async () => {
    await visit('Images', '/system/image');
    await page.waitForFunction(() => [...document.querySelectorAll('#page img.thumb')].some((i) => (i as HTMLImageElement).naturalWidth === 20));
    await page.setInputFiles('#page input[type=file]', { name: 'chart.png', mimeType: 'image/png', buffer: await pngFromCanvas(page) });
    await page.waitForSelector('text=Uploaded chart.png.');
    await page.waitForFunction(() => [...document.querySelectorAll('#page img.thumb')].some((i) => (i as HTMLImageElement).naturalWidth === 48));
    expect(await rowOf('chart.png').locator('td').nth(2).textContent()).toBe('48×32');
    await page.screenshot({ path: outputPath('spa-images.png'), fullPage: true });
  });

  test('Login log: shows the logins; deletes a selected row', async () => {
    await visit('Login log', '/system/loginLog');
    expect(await cells(2)).toContain('admin');
    const before = (await as('POST', '/app/sysLoginLog/page', {})).total as number;
    await page.locator('#page tbody tr').first().locator('input[type=checkbox]').check();
    await page.click('button:text-is("Delete selected")');
    await page.waitForSelector('text=Deleted 1 row(s).');
    expect((await as('POST', '/app/sysLoginLog/page', {})).total).toBe(before - 1);
  });

  test('Operation log: shows the writes, with details; deletes a selected row', async () => {
    await visit('Operation log', '/system/opLog');
    expect((await cells(3)).some((c) => c.startsWith('sys'))).toBe(true);
    await page.locator('#page tbody tr').first().locator('button:text-is("Details")').click();
    await page.waitForSelector('#dialog[open]');
    expect(await page.inputValue('#dialog-body textarea')).toContain('traceId: ');
    await page.click('#dialog-ok');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    // The second row: deleting the newest would free its id for the delete's own log row (op_log
    // ids are reused at the top), and the check below could not tell.
    const older = (await as('POST', '/app/sysOpLog/page', {})).records[1];
    await page.reload();
    await page.waitForSelector('body[data-ready="/system/opLog"]');
    await page.locator('#page tbody tr').nth(1).locator('input[type=checkbox]').check();
    await page.click('button:text-is("Delete selected")');
    await page.waitForSelector('text=Deleted 1 row(s).');
    expect((await noCaptcha.call('GET', `/app/sysOpLog/detail?id=${older.id}`, undefined, token)).status).toBe(404);
  });

  test('Backups: lists the archive; creates one', async () => {
    await visit('Backups', '/system/backup');
    expect(await cells(2)).toEqual(['done']);
    expect(await rowOf('done').locator('button:text-is("Download")').count()).toBe(1);
    await page.click('button:text-is("Create backup")');
    await page.waitForSelector('text=Backup created.');
    expect((await as('POST', '/app/sysBackup/page', {})).total).toBe(2);
  });

  test('Online users: shows the sessions; ends the one that is not this browser', async () => {
    await visit('Online users', '/system/online');
    const browsers = await cells(2);
    expect(browsers.some((b) => b.includes('Chrome'))).toBe(true);
    expect(browsers.length).toBeGreaterThanOrEqual(2);
    await page.locator('#page tbody tr', { hasNotText: 'Chrome' }).first().locator('button:text-is("Force logout")').click();
    await page.waitForSelector('text=Session ended.');
    await page.screenshot({ path: outputPath('spa-logged-in.png'), fullPage: true });
    // The server-side session (this test's token) is gone; the browser's is alive.
    expect((await noCaptcha.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, token)).status).toBe(401);
    token = await noCaptcha.login();
    await visit('Users', '/user/list');
  });

  test('log out: back to the login form, and the token is dead on the server too', async () => {
    const browserToken = await page.evaluate(() => Object.entries(sessionStorage).find(([k]) => k.startsWith('edge-admin-token@'))?.[1]);
    expect(browserToken).toBeTruthy();
    await page.click('#logout');
    await page.waitForSelector('#login-form', { state: 'visible' });
    expect(await visible(page, '#app-view')).toBe(false);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    expect((await noCaptcha.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, browserToken)).status).toBe(401);
    await page.close();
  });
});

/** Menu id → title, or the permission code for buttons. */
function flat(tree: { id: number; title: string; type: string; permission: string | null; children?: unknown[] }[], out = new Map<number, string>()) {
  for (const m of tree) {
    out.set(m.id, m.type === 'button' ? m.permission! : m.title);
    flat((m.children ?? []) as typeof tree, out);
  }
  return out;
}
