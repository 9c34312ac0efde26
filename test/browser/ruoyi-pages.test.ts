// RuoYi-Vue3, unmodified but for its dev proxy's target, in headless Chromium against our Bun
// server's RuoYi dialect (issue 28, docs/ruoyi.md): every page of 系统管理 and 系统监控 and the
// profile page, as the super admin and as a department manager whose role has data scope
// orgAndBelow. Each list must show our data (the manager only their departments' users); one add,
// edit, status switch and delete per page that has them, through the page's own dialogs; a forced
// logout; and no failing call or console error but the documented ones. The standard modules'
// pages (posts, dictionaries and their items, parameters, notices, jobs and their log) included.
// Run alone: `npx bun test test/browser/ruoyi-pages.test.ts` (the first run installs the client's
// dependencies from npm: minutes; later runs reuse them). Screenshots, the recorded calls and the
// timings go to test-output/ruoyi/ (or RUOYI_OUTPUT_DIR).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import type { Page } from 'playwright-core';
import { createKeys } from '../../src/core/keys.ts';
import { answerHash } from '../../src/modules/auth/captcha.service.ts';
import { readSheet } from '../../src/core/xlsx-read.ts';
import { ADMIN_PASSWORD, OUTPUT_DIR, hasChromium, inChromium, launchChromium, startApi, type RunningApi } from './support.ts';
import { RUOYI_TARBALL, changedClientFiles, fileSize, hasRuoyiTarball, openRecordedPage, startRuoyiClient, type RuoyiCall, type RuoyiClient } from './support/ruoyi-client.ts';

const PREFIX = '/ruoyi';
const OUT = process.env.RUOYI_OUTPUT_DIR ?? join(OUTPUT_DIR, 'ruoyi');
const PASSWORD = 'Ruoyi-Pages-42'; // RuoYi's forms take 6-20 characters
// Known to the test so it can plant a captcha's answer (the HMAC key derives from it).
const JWT_SECRET = 'ruoyi-pages-test-secret-0123456789abcdef';
const ready = hasChromium && hasRuoyiTarball;
const title = hasRuoyiTarball ? inChromium('RuoYi-Vue3 pages') : `RuoYi-Vue3 pages (skipped: ${RUOYI_TARBALL} is missing; set RUOYI_TARBALL)`;
if (!ready) console.log(`[ruoyi-pages] ${title}`);

let api: RunningApi;
let client: RuoyiClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let admin: string;
const t0 = Date.now();
const timings: Record<string, number | boolean> = {};
const ids: Record<string, number> = {};

/** Plants `answer` as the answer of captcha `key` in the server's database. */
async function plantCaptcha(key: string, answer: string) {
  const db = new Database(join(api.dir, 'admin.db'));
  try {
    db.query('UPDATE captchas SET answer_hash = ? WHERE key = ?').run(await answerHash({ keys: createKeys(new TextEncoder().encode(JWT_SECRET)) } as never, key, answer), key);
  } finally {
    db.close();
  }
}

/** A login through our own API (for setup), captcha included. */
async function nativeLogin(loginName: string, password: string): Promise<string> {
  const captcha = await api.call('GET', '/auth/captcha');
  await plantCaptcha(captcha.json.data.codeKey, 'ABCD');
  const r = await api.call('POST', '/auth/login', { loginName, password, codeKey: captcha.json.data.codeKey, securityCode: 'ABCD' });
  if (r.status !== 200) throw new Error(`login of ${loginName} failed: ${r.status} ${r.json.msg}`);
  return r.json.data.token;
}

async function must(method: string, path: string, body?: unknown, token = admin) {
  const r = await api.call(method, path, body, token);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.json.msg}`);
  return r.json.data;
}

beforeAll(async () => {
  if (!ready) return;
  mkdirSync(OUT, { recursive: true });
  let t = Date.now();
  // The captcha on, as by default: RuoYi gets it as a PNG (its page shows data:image/gif;base64,…).
  api = await startApi({ RUOYI_API_PREFIX: PREFIX, CAPTCHA_ENABLED: 'true', JWT_SECRET, MENU_PRESET: 'ruoyi', LOG_REQUESTS: 'true', LOG_LEVEL: 'info' }, { keepOutput: true });
  timings.apiStartMs = Date.now() - t;
  t = Date.now();
  [client, browser] = await Promise.all([startRuoyiClient({ baseUrl: api.url + PREFIX }), launchChromium()]);
  timings.clientReadyMs = Date.now() - t;
  Object.assign(timings, client.timings);

  // Our data, through our own API: two regions, a manager of North (scope orgAndBelow), users in
  // North A and in South; the admin's profile fields RuoYi's profile form requires.
  admin = await nativeLogin('admin', ADMIN_PASSWORD);
  ids.north = (await must('POST', '/app/sysOrg/add', { name: '华北区', code: 'north' })).id;
  ids.northA = (await must('POST', '/app/sysOrg/add', { name: '华北一部', code: 'north-a', parentId: ids.north })).id;
  ids.south = (await must('POST', '/app/sysOrg/add', { name: '华南区', code: 'south' })).id;
  const codes = ['sys:user:page', 'sys:user:detail', 'sys:user:add', 'sys:user:edit', 'sys:user:changeStatus', 'sys:user:delete', 'sys:user:ownRole',
    'sys:org:tree', 'sys:org:detail', 'sys:org:add', 'sys:org:edit', 'sys:org:delete', 'sys:role:list',
    'sys:online:page', 'sys:online:forceLogout', 'sys:loginLog:page', 'sys:opLog:page', 'sys:monitor:server', 'sys:monitor:cache'];
  const menus = (await must('GET', '/app/sysMenu/tree')) as any[];
  const flat: any[] = [];
  const walk = (ms: any[]) => ms.forEach((m) => (flat.push(m), walk(m.children)));
  walk(menus);
  const granted = flat.filter((m) => codes.includes(m.permission)).map((m) => m.id);
  const role = await must('POST', '/app/sysRole/add', { name: '部门经理', code: 'deptManager', dataScope: 'orgAndBelow' });
  await must('POST', '/app/sysRole/grantMenu', { roleId: role.id, menuIds: granted });
  await must('POST', '/app/sysUser/add', { loginName: 'manager', nickName: '华北经理', password: PASSWORD, orgId: ids.north, roleIds: [role.id] });
  await must('POST', '/app/sysUser/add', { loginName: 'north_a1', nickName: '华北一号', password: PASSWORD, orgId: ids.northA });
  await must('POST', '/app/sysUser/add', { loginName: 'south_1', nickName: '华南一号', password: PASSWORD, orgId: ids.south });
  await must('POST', '/app/sysLoginUser/updateInfo', { phone: '13800138000', email: 'admin@example.com' });
  console.log(`[ruoyi-pages] client ${client.url} -> ${client.baseUrl}; install ${client.install.cold ? 'cold' : 'warm'} ${client.install.ms} ms; vite ready in ${client.timings.devServerStartMs} ms`);
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await client?.stop();
  await api?.stop();
  if (ready) {
    timings.totalMs = Date.now() - t0;
    writeFileSync(join(OUT, 'timings.json'), JSON.stringify(timings, null, 2));
    if (client) writeFileSync(join(OUT, 'vite.log'), client.output());
    console.log(`[ruoyi-pages] ${JSON.stringify(timings)}; output in ${OUT}`);
  }
}, 60_000);

/**
 * Does `act` and waits for a success toast saying `text` that was not there before (a toast of an
 * earlier step can still be showing), then for the list the page reloads after it.
 */
async function toastAfter(page: Page, text: string, act: () => Promise<void>) {
  await page.evaluate(() => document.querySelectorAll('.el-message').forEach((e) => e.setAttribute('data-seen', '')));
  await act();
  await page.locator('.el-message--success:not([data-seen])', { hasText: text }).first().waitFor({ state: 'visible' });
  await page.locator('.app-main .el-loading-mask:visible').first().waitFor({ state: 'detached' }).catch(() => undefined);
}

/** What a page of the client does, and the helpers that drive Element Plus the way a user does. */
function driver(page: Page, shots: string) {
  let steps = 0;
  const dialog = () => page.locator('.el-dialog:visible').last();
  return {
    /**
     * Opens a page as its sidebar link does: through RuoYi's router once the app runs (a reload per
     * page would cost seconds each), by URL before. The page just left is marked, so the waited-for
     * element is the new page's (RuoYi's transition lets the old one leave first).
     */
    async open(path: string, waitFor: string) {
      const inApp = await page.evaluate(() => !!(document.querySelector('#app') as any)?.__vue_app__ && !location.pathname.startsWith('/login'));
      if (!inApp) {
        await page.goto(`${client.url}${path}`);
        await page.waitForSelector(waitFor, { state: 'visible' });
        await page.waitForLoadState('networkidle');
        return;
      }
      // A mark of its own per step: a page kept alive by RuoYi's tabs comes back with the mark it left with.
      const mark = String(++steps);
      await page.evaluate(([to, m]) => {
        document.querySelectorAll('.app-main > *').forEach((e) => e.setAttribute('data-left', m!));
        return (document.querySelector('#app') as any).__vue_app__.config.globalProperties.$router.push(to);
      }, [path, mark]);
      await page.waitForURL((u) => u.pathname === path);
      await page.locator(`.app-main > :not([data-left="${mark}"]) ${waitFor}`).first().waitFor({ state: 'visible' });
      // The page's first answers (its list and dictionaries).
      await page.locator('.app-main .el-loading-mask:visible').first().waitFor({ state: 'detached' }).catch(() => undefined);
    },
    /** Follows a link of the page (a button that routes) to `url`, then waits for `waitFor` on the new page. */
    async follow(link: () => Promise<void>, url: RegExp, waitFor: string) {
      const mark = String(++steps);
      await page.evaluate((m) => document.querySelectorAll('.app-main > *').forEach((e) => e.setAttribute('data-left', m)), mark);
      await link();
      await page.waitForURL(url);
      await page.locator(`.app-main > :not([data-left="${mark}"]) ${waitFor}`).first().waitFor({ state: 'visible' });
      await page.locator('.app-main .el-loading-mask:visible').first().waitFor({ state: 'detached' }).catch(() => undefined);
    },
    async shot(name: string) {
      const file = join(OUT, `${shots}-${name}.png`);
      await page.screenshot({ path: file, fullPage: false });
      expect(fileSize(file)).toBeGreaterThan(5_000);
    },
    row: (text: string) => page.locator('.el-table__body-wrapper .el-table__row', { hasText: text }).first(),
    dialog,
    async fill(placeholder: string, value: string) {
      await dialog().getByPlaceholder(placeholder, { exact: true }).fill(value);
    },
    /** Clicks the dialog's 确 定 and waits for RuoYi's success toast. */
    async submit(success: string) {
      await toastAfter(page, success, () => dialog().locator('.el-dialog__footer button', { hasText: '确 定' }).click());
    },
    /** Confirms RuoYi's message box and waits for the success toast. */
    async confirm(success: string) {
      await toastAfter(page, success, () => page.locator('.el-message-box .el-message-box__btns .el-button--primary').click());
    },
    async toolbar(label: string) {
      await page.locator('.mb8 button', { hasText: label }).first().click();
    },
    async select(text: string) {
      await page.locator('.el-table__body-wrapper .el-table__row', { hasText: text }).first().locator('.el-checkbox').first().click();
    },
    /** The visible text of a table's rows. */
    async rows() {
      return page.locator('.el-table__body-wrapper .el-table__row').allInnerTexts();
    },
  };
}

/**
 * Logs in through RuoYi's login page, captcha included: the picture must have decoded in the
 * page (a PNG under RuoYi's data:image/gif label); its answer is then planted in the server's
 * database (the picture is for eyes) and typed in.
 */
async function loginAs(page: Page, name: string, password: string, shot?: string) {
  const captcha = page.waitForResponse((r) => r.url().endsWith('/dev-api/captchaImage'));
  await page.goto(`${client.url}/login`);
  const { uuid, img } = (await (await captcha).json()) as { uuid: string; img: string };
  const picture = page.locator('img.login-code-img');
  await picture.waitFor({ state: 'visible' });
  await page.waitForFunction(() => ((document.querySelector('img.login-code-img') as HTMLImageElement | null)?.naturalWidth ?? 0) > 0);
  expect(await picture.evaluate((el: HTMLImageElement) => [el.complete, el.naturalWidth, el.naturalHeight, el.src.slice(0, 22)])).toEqual([true, 240, 80, 'data:image/gif;base64,']);
  expect(img.length).toBeGreaterThan(1000);
  if (shot) await page.screenshot({ path: join(OUT, shot) });
  await plantCaptcha(uuid, 'ABCD');
  await page.locator('.login-form input[placeholder="验证码"]').fill('abcd');
  await page.locator('.login-form input[placeholder="账号"]').fill(name);
  await page.locator('.login-form input[placeholder="密码"]').fill(password);
  await page.locator('.login-form button').click();
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  await page.waitForSelector('.sidebar-container .el-menu', { state: 'visible' });
}

/** The calls that did not end as code 200 (or a binary), except the ones `allowed` names. */
function failedCalls(calls: RuoyiCall[], allowed: RegExp[] = []) {
  return calls
    .filter((c) => c.failure || c.status !== 200 || (c.body && !/"code":200[,}]/.test(c.body)))
    .map((c) => `${c.method} ${c.path} -> ${c.status} ${c.failure ?? c.body?.slice(0, 160)}`)
    .filter((line) => !allowed.some((a) => a.test(line)));
}

describe.skipIf(!ready)(title, () => {
  test('the super admin: every page shows our data, and each one\'s add, edit, switch and delete work', async () => {
    const { page, calls, consoleErrors, pageErrors, assetFailures, settled } = await openRecordedPage(browser.context, client);
    page.setDefaultTimeout(45_000);
    const d = driver(page, 'admin');
    const dump = async () => {
      await settled();
      writeFileSync(join(OUT, 'admin-calls.json'), JSON.stringify({ calls, consoleErrors, pageErrors, assetFailures }, null, 2));
    };
    try {
    let t = Date.now();
    await loginAs(page, 'admin', ADMIN_PASSWORD, 'login.png');
    timings.adminLoginMs = Date.now() - t;
    await d.shot('index');
    const sidebar = await page.locator('.sidebar-container').innerText();
    for (const item of ['系统管理', '系统监控']) expect(sidebar).toContain(item);

    // 用户管理
    t = Date.now();
    await d.open('/system/user', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('south_1');
    await d.toolbar('新增');
    await d.fill('请输入用户昵称', '界面用户');
    await d.fill('请输入用户名称', 'ui_user');
    await d.fill('请输入用户密码', PASSWORD);
    await d.submit('新增成功');
    expect(await d.row('ui_user').innerText()).toContain('界面用户');
    await d.select('ui_user');
    await d.toolbar('修改');
    await d.fill('请输入用户昵称', '界面用户二');
    await d.submit('修改成功');
    await d.row('ui_user').locator('.el-switch').click();
    await d.confirm('停用成功');
    await d.shot('user');
    await d.select('ui_user');
    await d.toolbar('删除');
    await d.confirm('删除成功');
    expect((await d.rows()).join('\n')).not.toContain('ui_user');
    // 导出: RuoYi's download() posts the page's filter as a form and saves our XLSX under its own name.
    const exportStarted = Date.now();
    const [download] = await Promise.all([page.waitForEvent('download'), d.toolbar('导出')]);
    expect(download.suggestedFilename()).toMatch(/^user_\d+\.xlsx$/);
    const exported = await readSheet(new Uint8Array(readFileSync((await download.path())!)));
    expect(exported.slice(1).map((r) => r[1])).toContain('south_1');
    timings.userExportMs = Date.now() - exportStarted;
    timings.userPageMs = Date.now() - t;

    // 角色管理
    t = Date.now();
    await d.open('/system/role', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('deptManager');
    await d.toolbar('新增');
    await d.fill('请输入角色名称', '界面角色');
    await d.fill('请输入权限字符', 'uiRole');
    await d.submit('新增成功');
    await d.select('uiRole');
    await d.toolbar('修改');
    await d.fill('请输入角色名称', '界面角色二');
    await d.submit('修改成功');
    await d.row('uiRole').locator('.el-switch').click();
    await d.confirm('停用成功');
    await d.shot('role');
    await d.select('uiRole');
    await d.toolbar('删除');
    await d.confirm('删除成功');
    timings.rolePageMs = Date.now() - t;

    // 部门管理 (our organisations: flat list, tree built by the page)
    t = Date.now();
    await d.open('/system/dept', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('华北一部');
    await d.row('华南区').locator('button', { hasText: '新增' }).click();
    await d.fill('请输入部门名称', '华南二部');
    await d.submit('新增成功');
    await d.row('华南二部').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入部门名称', '华南三部');
    await d.submit('修改成功');
    await d.shot('dept');
    await d.row('华南三部').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.deptPageMs = Date.now() - t;

    // 菜单管理
    t = Date.now();
    await d.open('/system/menu', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('用户管理');
    await d.row('系统监控').locator('button', { hasText: '新增' }).click();
    await d.fill('请输入菜单名称', '界面目录');
    await d.fill('请输入路由地址', 'uidir');
    await d.dialog().locator('.el-input-number input').first().fill('9');
    await d.submit('新增成功');
    // The tree starts folded: search for it (the page then lists the matches flat).
    await page.locator('.el-form').first().getByPlaceholder('请输入菜单名称').fill('界面目录');
    await page.locator('.el-form').first().locator('button', { hasText: '搜索' }).click();
    await page.waitForLoadState('networkidle');
    await d.row('界面目录').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入菜单名称', '界面目录二');
    await d.submit('修改成功');
    await d.shot('menu');
    await d.row('界面目录二').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.menuPageMs = Date.now() - t;

    // 岗位管理: add, edit (its status through the dialog's radio), delete.
    t = Date.now();
    await d.open('/system/post', '.el-table');
    await d.toolbar('新增');
    await d.fill('请输入岗位名称', '界面岗位');
    await d.fill('请输入编码名称', 'ui_post');
    await d.submit('新增成功');
    await d.row('ui_post').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入岗位名称', '界面岗位二');
    await d.dialog().locator('.el-radio', { hasText: '停用' }).click();
    await d.submit('修改成功');
    expect(await d.row('ui_post').innerText()).toMatch(/界面岗位二[\s\S]*停用/);
    await d.shot('post');
    await d.row('ui_post').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.postPageMs = Date.now() - t;

    // 字典管理: a type, and on its items page (RuoYi's own route) an item; the seeded types show
    // RuoYi's values through their tags (正常 for '0').
    t = Date.now();
    await d.open('/system/dict', '.el-table__row');
    expect((await d.rows()).join('\n')).toMatch(/sys_yes_no[\s\S]*正常/);
    await d.toolbar('新增');
    await d.fill('请输入字典名称', '界面字典');
    await d.fill('请输入字典类型', 'ui_dict');
    await d.submit('新增成功');
    await d.row('ui_dict').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入字典名称', '界面字典二');
    await d.submit('修改成功');
    await d.shot('dict');
    await d.follow(() => d.row('ui_dict').locator('button', { hasText: '列表' }).click(), /\/system\/dict-data\/index\/\d+$/, '.el-table');
    await d.toolbar('新增');
    await d.fill('请输入数据标签', '界面项');
    await d.fill('请输入数据键值', 'ui_item');
    await d.submit('新增成功');
    await d.row('ui_item').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入数据标签', '界面项二');
    await d.dialog().locator('.el-radio', { hasText: '停用' }).click();
    await d.submit('修改成功');
    expect(await d.row('ui_item').innerText()).toMatch(/界面项二[\s\S]*停用/);
    await d.shot('dict-data');
    await d.row('ui_item').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    await d.open('/system/dict', '.el-table__row');
    await d.row('ui_dict').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.dictPagesMs = Date.now() - t;

    // 参数设置
    t = Date.now();
    await d.open('/system/config', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('sys.user.initPassword');
    await d.toolbar('新增');
    await d.fill('请输入参数名称', '界面参数');
    await d.fill('请输入参数键名', 'ui.param');
    await d.fill('请输入参数键值', 'one');
    await d.submit('新增成功');
    await d.row('ui.param').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入参数键值', 'two');
    await d.submit('修改成功');
    expect(await d.row('ui.param').innerText()).toContain('two');
    await d.shot('config');
    await d.row('ui.param').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.configPageMs = Date.now() - t;

    // 通知公告: an announcement, then closed through the dialog's status radio; the bell shows it.
    t = Date.now();
    await d.open('/system/notice', '.el-table');
    await d.toolbar('新增');
    await d.fill('请输入公告标题', '界面公告');
    await d.dialog().locator('.el-form-item', { hasText: '公告类型' }).locator('.el-select__wrapper').click();
    await page.locator('.el-select-dropdown__item:visible').filter({ hasText: /^公告$/ }).click();
    await d.submit('新增成功');
    expect(await d.row('界面公告').innerText()).toMatch(/公告[\s\S]*正常/);
    await d.row('界面公告').locator('button', { hasText: '修改' }).click();
    await d.fill('请输入公告标题', '界面公告二');
    await d.dialog().locator('.el-radio', { hasText: '关闭' }).click();
    await d.submit('修改成功');
    expect(await d.row('界面公告二').innerText()).toContain('关闭');
    await d.shot('notice');
    await d.row('界面公告二').locator('button', { hasText: '删除' }).click();
    await d.confirm('删除成功');
    timings.noticePageMs = Date.now() - t;

    // 定时任务: our registered jobs; an edit (the misfire policy), the status switch, a run; then
    // its log (RuoYi's own route, by job name): a row deleted, the rest cleared.
    t = Date.now();
    await d.open('/monitor/job', '.el-table__row');
    const job = d.row('expiredCleanup');
    expect(await job.innerText()).toContain('0 */10 * * * ?');
    await job.locator('.el-table__cell').last().locator('button').nth(0).click();
    await d.dialog().locator('.el-radio-button', { hasText: '放弃执行' }).click();
    await d.submit('修改成功');
    await d.row('expiredCleanup').locator('.el-switch').click();
    await d.confirm('停用成功');
    // Run now runs a disabled job too (it is explicit).
    await d.row('expiredCleanup').locator('.el-table__cell').last().locator('button').nth(2).click();
    await d.confirm('执行成功');
    await d.shot('job');
    await d.follow(() => d.row('expiredCleanup').locator('.el-table__cell').last().locator('button').nth(3).click(), /\/monitor\/job-log\/index\/\d+$/, '.el-table__row');
    expect((await d.rows()).join('\n')).toMatch(/expiredCleanup[\s\S]*成功/);
    await d.shot('job-log');
    await page.locator('.el-table__body-wrapper .el-table__row').first().locator('.el-checkbox').first().click();
    await d.toolbar('删除');
    await d.confirm('删除成功');
    await d.toolbar('清空');
    await d.confirm('清空成功');
    expect(await page.locator('.el-table__body-wrapper .el-table__row').count()).toBe(0);
    timings.jobPagesMs = Date.now() - t;

    // 日志管理: our op-log rows of what was just done, and the login log (with a login of the
    // manager's, whose session 在线用户 then forces out).
    t = Date.now();
    const victim = await nativeLogin('manager', PASSWORD);
    await d.open('/system/log/operlog', '.el-table__row');
    expect((await d.rows()).join('\n')).toMatch(/sysJobLog[\s\S]*清空数据/);
    await d.shot('operlog');
    await d.open('/system/log/logininfor', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('admin');
    await d.select('manager');
    await d.toolbar('删除');
    await d.confirm('删除成功');
    await d.shot('logininfor');

    // 系统监控: online users (the manager's session, forced out), server and caches.
    await d.open('/monitor/online', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('manager');
    await d.shot('online');
    await d.row('manager').locator('button', { hasText: '强退' }).click();
    await d.confirm('删除成功');
    expect((await api.call('GET', '/app/sysLoginUser/getLoginUserInformation', undefined, victim)).status).toBe(401);
    await d.open('/monitor/server', '.el-card');
    await page.waitForSelector('.el-loading-mask', { state: 'detached' }).catch(() => undefined);
    expect(await page.locator('.app-container').innerText()).toMatch(/Bun/);
    await d.shot('server');
    await d.open('/monitor/cache', '.el-card');
    await d.shot('cache');
    await d.open('/monitor/cacheList', '.el-table__row');
    expect((await d.rows()).join('\n')).toContain('menus');
    await d.shot('cachelist');

    // 个人中心
    await d.open('/user/profile', '.el-form');
    const info = page.locator('.el-tab-pane:visible .el-form').first();
    await info.locator('.el-form-item', { hasText: '用户昵称' }).locator('input').fill('超级管理员');
    await info.locator('button', { hasText: '保存' }).click();
    await page.locator('.el-message--success', { hasText: '修改成功' }).first().waitFor({ state: 'visible' });
    await d.shot('profile');
    timings.monitorAndProfileMs = Date.now() - t;
    } catch (e) {
      await page.screenshot({ path: join(OUT, 'admin-failed.png') }).catch(() => undefined);
      throw e;
    } finally {
      await dump();
    }
    expect(failedCalls(calls)).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(assetFailures).toEqual([]);
    // The calls reached our server under the prefix and were answered by it.
    expect(calls.every((c) => /^[0-9a-f]{32}$/.test(c.traceId ?? ''))).toBe(true);
    const ops = api
      .output()
      // The server's log lines are JSON; the start-up banner is plain text for people.
      .filter((line) => line.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((e) => e.msg === 'request' && e.path?.startsWith(`${PREFIX}/`));
    expect(ops.length).toBeGreaterThan(20);
    await page.close();
  }, 300_000);

  test('the department manager (orgAndBelow) sees their departments and users only', async () => {
    const { page, calls, consoleErrors, pageErrors, settled } = await openRecordedPage(browser.context, client);
    page.setDefaultTimeout(45_000);
    await page.context().clearCookies();
    const d = driver(page, 'manager');
    try {
    await loginAs(page, 'manager', PASSWORD);
    // The manager's routes: the pages their role grants, not the menu page.
    await settled();
    const routes = calls.find((c) => c.path === '/getRouters')?.body ?? '';
    expect(routes).toContain('system/user/index');
    expect(routes).not.toContain('system/menu/index');

    await d.open('/system/user', '.el-table__row');
    const users = (await d.rows()).join('\n');
    expect(users).toContain('north_a1');
    expect(users).not.toContain('south_1');
    expect(users).not.toContain('admin');
    await d.toolbar('新增');
    await d.fill('请输入用户昵称', '经理的人');
    await d.fill('请输入用户名称', 'mgr_user');
    await d.fill('请输入用户密码', PASSWORD);
    await d.dialog().locator('.el-form-item', { hasText: '归属部门' }).locator('.el-select__wrapper').first().click();
    // The picker's tree starts folded: the manager's own department is its root.
    await page.locator('.el-tree-select__popper .el-tree-node__content', { hasText: '华北区' }).first().click();
    await d.submit('新增成功');
    await d.select('mgr_user');
    await d.toolbar('修改');
    await d.fill('请输入用户昵称', '经理的人二');
    await d.submit('修改成功');
    await d.row('mgr_user').locator('.el-switch').click();
    await d.confirm('停用成功');
    await d.shot('user');
    await d.select('mgr_user');
    await d.toolbar('删除');
    await d.confirm('删除成功');

    await d.open('/system/dept', '.el-table__row');
    const depts = (await d.rows()).join('\n');
    expect(depts).toContain('华北一部');
    expect(depts).not.toContain('华南区');
    await d.shot('dept');
    for (const [path, wait, name] of [['/system/log/operlog', '.el-table', 'operlog'], ['/system/log/logininfor', '.el-table', 'logininfor'], ['/monitor/online', '.el-table', 'online'], ['/monitor/server', '.el-card', 'server'], ['/monitor/cache', '.el-card', 'cache'], ['/user/profile', '.el-form', 'profile']] as const) {
      await d.open(path, wait);
      await d.shot(name);
    }
    // The manager's op-log page lists their own operations only (their scope), not the admin's.
    await d.open('/system/log/operlog', '.el-table__row');
    const ops = (await d.rows()).join('\n');
    expect(ops).toContain('manager');
    expect(ops).not.toContain('admin');
    } catch (e) {
      await page.screenshot({ path: join(OUT, 'manager-failed.png') }).catch(() => undefined);
      throw e;
    }

    await settled();
    writeFileSync(join(OUT, 'manager-calls.json'), JSON.stringify({ calls, consoleErrors, pageErrors }, null, 2));
    expect(failedCalls(calls)).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(await changedClientFiles(client.appDir)).toEqual(['vite.config.js']);
    await page.close();
  }, 300_000);
});
