// The example console (examples/spa) in headless Chromium against the real Bun server, each on its
// own origin, so every call is a real cross-origin fetch under CORS. Page by page: every sidebar
// entry shows its data and does one write, checked on the server afterwards.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { BrowserContext, Page } from 'playwright-core';
import { serveSpa } from '../../examples/spa/serve.ts';
import { base32Decode } from '../../src/core/base32.ts';
import { totpAt } from '../../src/core/totp.ts';
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
  // http://localhost too: passkeys need a host name (an IP address is no WebAuthn RP id).
  const cors = { CORS_ORIGINS: `${origin(spa)},http://localhost:${spa.port}` };
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
    const field = page.locator('#dialog-body label', { hasText: label }).locator('input, select, textarea').first();
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

/** A notice's content as sent: what survives sanitising is shown; the rest must never run. */
const NOTICE_SENT = '<p>Down at <strong>02:00</strong> UTC<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2"></p>';

const SIDEBAR = [
  ['User management', [['Users', '/user/list'], ['Organisations', '/user/org'], ['Posts', '/user/post']]],
  ['Permission management', [['Roles', '/permission/role'], ['Menus', '/permission/menu']]],
  [
    'System management',
    [
      ['Files', '/system/file'],
      ['Images', '/system/image'],
      ['Login log', '/system/loginLog'],
      ['Operation log', '/system/opLog'],
      ['Online users', '/system/online'],
      ['Dictionaries', '/system/dict'],
      ['Parameters', '/system/config'],
      ['Backups', '/system/backup'],
      ['Notices', '/system/notice'],
      ['Scheduled jobs', '/system/job'],
      ['Job log', '/system/jobLog'],
      ['API keys', '/system/apiKey'],
    ],
  ],
] as const;

describe.skipIf(!hasChromium)(inChromium('example SPA in Chromium: every sidebar entry'), () => {
  beforeAll(async () => {
    if (!hasChromium) return;
    token = await noCaptcha.login();
    // Something on every page before the browser comes: users for two pages of 2 (bob holds a
    // post), an organisation, a role without menus, a file, an image, a backup, a published notice
    // whose content tries scripts (the logs, dictionaries, parameters and jobs fill themselves).
    const engineer = await as('POST', '/app/sysPost/add', { code: 'engineer', name: 'Engineer', sort: 1 });
    for (const loginName of ['alice', 'bob'])
      await as('POST', '/app/sysUser/add', { loginName, password: `${loginName}-Passw0rd-x`, nickName: loginName.toUpperCase(), ...(loginName === 'bob' ? { postIds: [engineer.id] } : {}) });
    await as('POST', '/app/sysNotice/add', { title: 'Maintenance', type: 'notice', status: 'published', content: NOTICE_SENT });
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
    await page.locator('#dialog-body label.check', { hasText: 'Engineer' }).locator('input').check();
    await saveDialog({ 'Login name': 'carol', Password: 'Carol-Passw0rd-x', 'Nick name': 'Carol', Organisation: 'Head office' });
    await page.waitForSelector('text=User added.');
    const carol = (await as('POST', '/app/sysUser/page', { params: { loginName: 'carol' } })).records[0];
    const engineer = (await as('GET', '/app/sysPost/list'))[0];
    expect(carol).toMatchObject({ loginName: 'carol', nickName: 'Carol', orgName: 'Head office', postIds: [engineer.id] });
    await page.fill('#page [data-filter=loginName]', 'carol');
    await page.press('#page [data-filter=loginName]', 'Enter');
    await page.waitForSelector('text=Page 1 of 1 (1)');
    expect(await cells(4)).toEqual(['Engineer']);
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

  test('Dictionaries: pages through the types; opens the items of one and relabels an item', async () => {
    await visit('Dictionaries', '/system/dict');
    expect(await page.textContent('.page-info')).toBe('Page 1 of 6 (11)');
    await page.fill('#page [data-filter=code]', 'normal_disable');
    await page.press('#page [data-filter=code]', 'Enter');
    await page.waitForSelector('text=Page 1 of 1 (1)');
    expect(await cells(1)).toEqual(['sys_normal_disable']);
    // Items open on the hidden "Dictionary items" page, routed with the type.
    await rowOf('sys_normal_disable').locator('a:text-is("Items")').click();
    await page.waitForSelector('body[data-ready="/system/dict/data"]');
    expect(await page.textContent('#page-title')).toBe('Dictionary items');
    expect(await page.inputValue('#page [data-filter=typeCode]')).toBe('sys_normal_disable');
    expect(await cells(1)).toEqual(['正常', '停用']);
    expect(await cells(2)).toEqual(['enabled', 'disabled']);
    await page.locator('#page tbody tr').first().locator('button:text-is("Edit")').click();
    await saveDialog({ Label: 'Active' });
    await page.waitForSelector('text=Dictionary item saved.');
    await page.waitForSelector('#page tbody .pill:text-is("Active")');
    const items = (await as('GET', '/app/sysDict/items?code=sys_normal_disable')) as { label: string; value: string }[];
    expect(items.map((i) => [i.value, i.label])).toEqual([
      ['enabled', 'Active'],
      ['disabled', '停用'],
    ]);
  });

  test('Posts: lists the posts with the dictionary label; adds one; a held post stays', async () => {
    await visit('Posts', '/user/post');
    expect(await cells(0)).toEqual(['engineer']);
    // The status as the dictionary labels it, relabelled on the Dictionaries page just before.
    expect(await cells(3)).toEqual(['Active']);
    await page.click('button:text-is("Add post")');
    await saveDialog({ Code: 'manager', Name: 'Manager', Sort: '2' });
    await page.waitForSelector('text=Post added.');
    await page.waitForSelector('#page code:text-is("manager")');
    const manager = (await as('POST', '/app/sysPost/page', { params: { code: 'manager' } })).records[0];
    expect(manager).toMatchObject({ code: 'manager', name: 'Manager', sort: 2, status: 'enabled' });
    // Bob holds the engineer post: the server refuses, the page shows why, nothing is deleted.
    await rowOf('engineer').locator('button:text-is("Delete")').click();
    await page.waitForSelector('#notice.error');
    expect(await page.textContent('#notice')).toContain('(engineer) is held by 2 users');
    expect((await as('POST', '/app/sysPost/page', {})).total).toBe(2);
  });

  test('Parameters: the built-in ones cannot be deleted; adds one, read back by key', async () => {
    await visit('Parameters', '/system/config');
    expect(await page.textContent('.page-info')).toBe('Page 1 of 2 (3)');
    expect(await page.locator('#page tbody button:text-is("Edit")').count()).toBe(2);
    expect(await page.locator('#page tbody button:text-is("Delete")').count()).toBe(0);
    await page.click('button:text-is("Add parameter")');
    await saveDialog({ Name: 'Theme', Key: 'app.theme', Value: 'dark' });
    await page.waitForSelector('text=Parameter added.');
    await page.waitForSelector('#page code:text-is("app.theme")');
    expect(await rowOf('app.theme').locator('button:text-is("Delete")').count()).toBe(1);
    expect(await as('GET', '/app/sysConfig/value?key=app.theme')).toBe('dark');
  });

  test('Notices: the sanitised content in a frame that runs nothing; publishes one; marks them read', async () => {
    await visit('Notices', '/system/notice');
    expect(await cells(0)).toEqual(['Maintenance']);
    expect(await cells(2)).toEqual(['正常']);
    await page.waitForSelector('#unread:text-is("1")');
    await rowOf('Maintenance').locator('button:text-is("View")').click();
    await page.waitForSelector('#dialog[open]');
    const frame = page.frameLocator('#dialog iframe.html-view');
    expect(await frame.locator('strong').textContent()).toBe('02:00');
    expect(await frame.locator('script, img').count()).toBe(0);
    expect(await page.getAttribute('#dialog iframe.html-view', 'sandbox')).not.toContain('allow-scripts');
    await page.screenshot({ path: outputPath('spa-notice.png') });
    await page.click('#dialog-ok');
    await page.waitForSelector('#dialog', { state: 'hidden' });

    await page.click('button:text-is("Add notice")');
    await saveDialog({
      Title: 'Release 2.0',
      Status: '正常 (Published)',
      Content: '<h2 onclick="window.pwned = 3">New</h2><p><em>faster</em> <a href="javascript:window.pwned = 4">pages</a></p>',
    });
    await page.waitForSelector('text=Notice added.');
    const added = (await as('POST', '/app/sysNotice/page', { params: { title: 'Release' } })).records[0];
    expect(added).toMatchObject({ status: 'published', createdByName: 'admin' });
    expect(added.content).toContain('<em>faster</em>');
    expect(added.content).not.toMatch(/onclick|javascript:/);
    // The header: both unread; its dialog shows them as the server returned them; mark them read.
    await page.waitForSelector('#unread:text-is("2")');
    await page.click('#latest');
    await page.waitForSelector('#dialog[open]');
    expect(await page.locator('#dialog iframe.html-view').count()).toBe(2);
    expect(await page.frameLocator('#dialog iframe.html-view >> nth=0').locator('em').textContent()).toBe('faster');
    await page.click('#dialog-ok:text-is("Mark as read")');
    await page.waitForSelector('#unread', { state: 'hidden' });
    // Read marks are the user's (this test's own session is the same admin).
    expect((await as('GET', '/app/sysNotice/latest')).unread).toBe(0);
    expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
  });

  test('Scheduled jobs: lists the seeded jobs; runs one now; disables it', async () => {
    await visit('Scheduled jobs', '/system/job');
    expect(await page.textContent('.page-info')).toBe('Page 1 of 2 (4)');
    await page.fill('#page [data-filter=name]', 'expiredCleanup');
    await page.press('#page [data-filter=name]', 'Enter');
    await page.waitForSelector('text=Page 1 of 1 (1)');
    const job = (await as('POST', '/app/sysJob/page', { params: { name: 'expiredCleanup' } })).records[0];
    expect(await cells(0)).toEqual([job.name + 'expiredCleanup']);
    await rowOf('expiredCleanup').locator('button:text-is("Run now")').click();
    await page.waitForSelector(`#notice:has-text("${job.name}: success in")`);
    const runs = (await as('POST', '/app/sysJobLog/page', { params: { jobId: job.id } })).records;
    expect(runs[0]).toMatchObject({ jobId: job.id, status: 'success' });
    await rowOf('expiredCleanup').locator('button:text-is("Disable")').click();
    await page.waitForSelector('text=Status changed.');
    await rowOf('expiredCleanup').locator('button:text-is("Enable")').waitFor();
    expect((await as('GET', `/app/sysJob/detail?id=${job.id}`)).status).toBe('disabled');
    // Its Log button opens the job log on this job.
    await rowOf('expiredCleanup').locator('a:text-is("Log")').click();
    await page.waitForSelector('body[data-ready="/system/jobLog"]');
    expect(await page.inputValue('#page [data-filter=jobId]')).toBe(String(job.id));
    // Only this job's runs. The scheduler may also have run it (its cron is every 10 minutes), so
    // the count is not fixed: every row names this job, and there is at least the one we ran.
    const names = await cells(2);
    expect(names.length).toBeGreaterThanOrEqual(1);
    expect(new Set(names)).toEqual(new Set([job.name]));
    await visit('Scheduled jobs', '/system/job');
  });

  test('Job log: shows the runs with their details; deletes a selected row', async () => {
    await visit('Job log', '/system/jobLog');
    expect(await cells(2)).toContain('Expired sessions, captchas and rate limits');
    expect(await cells(3)).toContain('成功');
    const newest = (await as('POST', '/app/sysJobLog/page', {})).records[0];
    await page.locator('#page tbody tr').first().locator('button:text-is("Details")').click();
    await page.waitForSelector('#dialog[open]');
    expect(await page.inputValue('#dialog-body textarea')).toContain(`message: ${newest.message}`);
    await page.click('#dialog-ok');
    await page.waitForSelector('#dialog', { state: 'hidden' });
    await page.locator('#page tbody tr').first().locator('input[type=checkbox]').check();
    await page.click('button:text-is("Delete selected")');
    await page.waitForSelector('text=Deleted 1 row(s).');
    const left = (await as('POST', '/app/sysJobLog/page', { pageSize: 100 })).records as { id: number; startedAt: string }[];
    expect(left.some((r) => r.id === newest.id && r.startedAt === newest.startedAt)).toBe(false);
  });

  test('API keys: adds a key whose secret, shown once, works against the API; revokes it (401 after)', async () => {
    await visit('API keys', '/system/apiKey');
    await page.click('button:text-is("Add API key")');
    await page.waitForSelector('#dialog[open]');
    // The codes offered are the caller's own (a super admin: every button code a key may carry).
    expect(await page.locator('#dialog-body .checks input[value="sys:user:page"]').count()).toBe(1);
    expect(await page.locator('#dialog-body .checks input[value^="sys:apiKey:"]').count()).toBe(0);
    await page.locator('#dialog-body label', { hasText: 'Name' }).locator('input').first().fill('Nightly sync');
    await page.locator('#dialog-body label', { hasText: 'Allowed addresses' }).locator('textarea').fill('127.0.0.1/32');
    await page.locator('#dialog-body .checks input[value="sys:user:page"]').check();
    await submitDialog();
    await page.waitForSelector('#secret-dialog[open]');
    expect(await page.textContent('#secret-dialog .warning')).toContain('only time it is shown');
    const secret = await page.inputValue('#secret-value');
    expect(secret).toMatch(/^ea_\d+_[A-Za-z0-9_-]{43}$/);
    await page.click('#secret-copy');
    expect(await page.textContent('#secret-copied')).not.toBe('');
    await page.click('#secret-done');
    await page.waitForSelector('#secret-dialog', { state: 'hidden' });
    expect(await page.inputValue('#secret-value')).toBe(''); // gone from the page
    await rowOf('Nightly sync').waitFor();
    expect(await rowOf('Nightly sync').textContent()).toContain('127.0.0.1/32');
    const stored = (await as('POST', '/app/sysApiKey/page', { params: { name: 'Nightly sync' } })).records[0];
    expect(stored).toMatchObject({ codes: ['sys:user:page'], allowedIps: ['127.0.0.1/32'], status: 'active', loginName: 'admin' });
    // The shown secret is a working key: a read it carries passes, from the allowed address.
    const use = () => fetch(`${noCaptcha.url}/app/sysUser/page`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: '{}' });
    expect((await use()).status).toBe(200);
    await rowOf('Nightly sync').locator('button:text-is("Revoke")').click();
    await page.waitForSelector('text=API key revoked.');
    expect((await as('POST', '/app/sysApiKey/page', { params: { name: 'Nightly sync' } })).records[0].status).toBe('revoked');
    expect((await use()).status).toBe(401);
  });

  test('a user holding the page codes only: the new pages show their data, no write buttons', async () => {
    const menus = flat(await as('GET', '/app/sysMenu/tree'));
    const grant = ['User management', 'Posts', 'sys:post:page', 'System management', 'Dictionaries', 'sys:dictType:page', 'Scheduled jobs', 'sys:job:page'];
    const menuIds = grant.map((t) => [...menus].find(([, v]) => v === t)![0]);
    const role = await as('POST', '/app/sysRole/add', { name: 'Viewer', code: 'viewer', dataScope: 'all' });
    await as('POST', '/app/sysRole/grantMenu', { roleId: role.id, menuIds });
    await as('POST', '/app/sysUser/add', { loginName: 'dave', password: 'Dave-Passw0rd-x', nickName: 'Dave', roleIds: [role.id] });
    const viewer = await open(noCaptcha, '&pageSize=2');
    try {
      await viewerChecks(viewer);
    } finally {
      // Logged out again, pass or fail: the online users page below counts the sessions.
      if (await viewer.locator('#logout').isVisible()) {
        await viewer.click('#logout');
        await viewer.waitForSelector('#login-form', { state: 'visible' });
      }
      await viewer.close();
    }
  });

  async function viewerChecks(viewer: Page) {
    await viewer.fill('#login-name', 'dave');
    await viewer.fill('#password', 'Dave-Passw0rd-x');
    await viewer.click('#login-submit');
    await viewer.waitForSelector('body[data-ready="/user/post"]');
    expect(await viewer.$$eval('#sidebar a', (links) => links.map((a) => a.textContent))).toEqual(['Posts', 'Dictionaries', 'Scheduled jobs']);
    // The latest notices are every logged-in user's.
    await viewer.waitForSelector('#unread:text-is("2")');
    for (const [title, path, rows] of [
      ['Posts', '/user/post', 2],
      ['Dictionaries', '/system/dict', 2],
      ['Scheduled jobs', '/system/job', 2],
    ] as const) {
      await viewer.click(`#sidebar a:text-is("${title}")`);
      await viewer.waitForSelector(`body[data-ready="${path}"]`);
      expect(await viewer.locator('#page tbody tr').count()).toBe(rows);
      // No Add/Edit/Delete/Run now/Enable, no Items or Log link (their pages are not granted).
      expect(await viewer.locator('#page tbody button, #page tbody a').count()).toBe(0);
      expect(await viewer.$$eval('#page .toolbar button', (bs) => bs.map((b) => b.textContent))).toEqual(['Search']);
    }
  }

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

// --- second factor (docs/second-factor.md) ---------------------------------------------------------

describe.skipIf(!hasChromium)(inChromium('example SPA in Chromium: second factor'), () => {
  const NAME = 'erin';
  const PASSWORD = 'Erin-Passw0rd-x';
  let mfa: Page;
  let adminToken = '';
  let secret: Uint8Array;
  let recovery: string[] = [];
  const asAdmin = async (method: string, path: string, body?: unknown) => {
    const r = await noCaptcha.call(method, path, body, adminToken);
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.json.msg}`);
    return r.json.data;
  };
  /** The newest login-log row of erin: its status and factor. */
  const lastLogin = async () => (await asAdmin('POST', '/app/sysLoginLog/page', { params: { loginName: NAME } })).records[0] as { status: string; factor: string | null };

  beforeAll(async () => {
    if (!hasChromium) return;
    adminToken = await noCaptcha.login();
    // A role that requires a second factor and grants the Posts page.
    const menus = flat(await asAdmin('GET', '/app/sysMenu/tree'));
    const menuIds = ['User management', 'Posts', 'sys:post:page'].map((t) => [...menus].find(([, v]) => v === t)![0]);
    const role = await asAdmin('POST', '/app/sysRole/add', { name: 'Guarded', code: 'guarded', dataScope: 'all', mfaRequired: true });
    await asAdmin('POST', '/app/sysRole/grantMenu', { roleId: role.id, menuIds });
    await asAdmin('POST', '/app/sysUser/add', { loginName: NAME, password: PASSWORD, nickName: 'Erin', roleIds: [role.id] });
    // On http://localhost (the RP id the API defaults to), which CORS_ORIGINS lists.
    mfa = await context.newPage();
    mfa.setDefaultTimeout(10_000);
    mfa.on('dialog', (d) => void d.accept());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://localhost:${spa.port}` });
    await mfa.goto(`http://localhost:${spa.port}/?api=${encodeURIComponent(noCaptcha.url)}`);
  }, 30_000);

  afterAll(async () => {
    await mfa?.close();
  });

  async function password() {
    await mfa.waitForSelector('#login-form', { state: 'visible' });
    await mfa.fill('#login-name', NAME);
    await mfa.fill('#password', PASSWORD);
    await mfa.click('#login-submit');
  }
  async function logOut() {
    await mfa.click('#logout');
    await mfa.waitForSelector('#login-form', { state: 'visible' });
  }

  test('a role requiring a factor: the session lands on My account; TOTP and a passkey added there; then the pages work', async () => {
    // Chromium's virtual authenticator (DevTools protocol) answers navigator.credentials.
    const cdp = await context.newCDPSession(mfa);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true },
    });
    await password();
    await mfa.waitForSelector('body[data-ready="/account"]');
    expect(await mfa.textContent('#mfa-required')).toContain('Your role requires a second factor');
    expect(await mfa.textContent('#mfa-status')).toBe('Authenticator app: off · Passkeys: 0 · Recovery codes left: 0 · required by your role');
    // Any other page leads back here.
    await mfa.click('#sidebar a:text-is("Posts")');
    await mfa.waitForFunction(() => location.hash === '#/account' && document.body.dataset.ready === '/account');

    await mfa.click('button:text-is("Set up an authenticator app")');
    await mfa.waitForSelector('#totp-secret');
    expect(await mfa.getAttribute('#totp-enrol img.qr', 'src')).toMatch(/^data:image\/svg\+xml;base64,/);
    secret = base32Decode((await mfa.textContent('#totp-secret'))!)!;
    expect(secret.length).toBe(20);
    // A wrong code: the server's message, nothing enrolled.
    await mfa.fill('#totp-confirm-code', String((Number(await totpAt(secret, Date.now())) + 500_000) % 1_000_000).padStart(6, '0'));
    await mfa.click('#totp-enrol button:text-is("Confirm")');
    await mfa.waitForSelector('#totp-enrol .error:visible');
    await mfa.fill('#totp-confirm-code', await totpAt(secret, Date.now()));
    await mfa.click('#totp-enrol button:text-is("Confirm")');
    await mfa.waitForSelector('#recovery-box');
    recovery = await mfa.$$eval('#recovery-box li', (lis) => lis.map((li) => li.textContent!));
    expect(recovery.length).toBe(10);
    expect(await mfa.textContent('#mfa-status')).toBe('Authenticator app: on · Passkeys: 0 · Recovery codes left: 10 · required by your role');
    expect(await mfa.locator('#mfa-required').count()).toBe(0);
    await mfa.click('#recovery-box button:text-is("Copy")');
    await mfa.waitForSelector('text=Recovery codes copied.');
    expect(await mfa.evaluate(() => navigator.clipboard.readText())).toBe(recovery.join('\n'));

    await mfa.click('button:text-is("Add a passkey")');
    await saveIn(mfa, { Name: 'Laptop' });
    await mfa.waitForSelector('#mfa td:text-is("Laptop")');
    expect(await mfa.textContent('#mfa-status')).toContain('Passkeys: 1');
    // The same session is no longer restricted.
    await mfa.click('#sidebar a:text-is("Posts")');
    await mfa.waitForSelector('body[data-ready="/user/post"]');
    expect(await mfa.locator('#page .error').count()).toBe(0);
    await logOut();
  });

  test('log in with the password, then a code in the second step', async () => {
    await password();
    await mfa.waitForSelector('#factor-form', { state: 'visible' });
    expect(await mfa.getAttribute('body', 'data-view')).toBe('login');
    expect(await visible(mfa, '#factor-passkey')).toBe(true);
    // The enrolment used this step's code: the next step's (one step of skew is accepted).
    await mfa.fill('#factor-code', await totpAt(secret, Date.now() + 30_000));
    await mfa.click('#factor-submit');
    await mfa.waitForSelector('body[data-ready="/user/post"]');
    expect(await lastLogin()).toMatchObject({ status: 'success', factor: 'totp' });
    await logOut();
  });

  test('a recovery code: the count left is shown', async () => {
    await password();
    await mfa.waitForSelector('#factor-form', { state: 'visible' });
    await mfa.click('#factor-switch:text-is("Use a recovery code")');
    await mfa.fill('#factor-recovery', recovery[0]!);
    await mfa.click('#factor-submit');
    await mfa.waitForSelector('#notice:text-is("Signed in with a recovery code: 9 recovery codes left.")');
    expect(await lastLogin()).toMatchObject({ status: 'success', factor: 'recovery' });
    await logOut();
  });

  test('a used recovery code is refused (the step stays); then the passkey', async () => {
    await password();
    await mfa.waitForSelector('#factor-form', { state: 'visible' });
    await mfa.click('#factor-switch');
    await mfa.fill('#factor-recovery', recovery[0]!);
    await mfa.click('#factor-submit');
    await mfa.waitForSelector('#factor-error:visible');
    expect(await mfa.textContent('#factor-error')).toBe('The second-factor code is wrong or has expired');
    expect(await mfa.getAttribute('body', 'data-view')).toBe('login');
    await mfa.click('#factor-passkey');
    await mfa.waitForSelector('body[data-ready="/user/post"]');
    expect(await lastLogin()).toMatchObject({ status: 'success', factor: 'passkey' });
    await logOut();
  });
});

/** Fills a dialog of `p` by label and saves it; its error fails the test. */
async function saveIn(p: Page, fields: Record<string, string>) {
  await p.waitForSelector('#dialog[open]');
  for (const [label, value] of Object.entries(fields)) await p.locator('#dialog-body label', { hasText: label }).locator('input').first().fill(value);
  await p.click('#dialog-ok');
  await p.waitForFunction(() => !(document.getElementById('dialog') as HTMLDialogElement).open || !document.getElementById('dialog-error')!.hidden);
  if (await p.locator('#dialog-error').isVisible()) throw new Error(`the dialog refused: ${await p.locator('#dialog-error').textContent()}`);
}

/** Menu id → title, or the permission code for buttons. */
function flat(tree: { id: number; title: string; type: string; permission: string | null; children?: unknown[] }[], out = new Map<number, string>()) {
  for (const m of tree) {
    out.set(m.id, m.type === 'button' ? m.permission! : m.title);
    flat((m.children ?? []) as typeof tree, out);
  }
  return out;
}
