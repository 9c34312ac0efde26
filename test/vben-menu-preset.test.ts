import { afterEach, beforeAll, beforeEach, describe, expect, spyOn, test } from 'bun:test';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import { ConfigError, parseConfig } from '../src/config.ts';
import { MENU_PRESETS } from '../src/compat/presets.ts';
import { applyVbenMenuPreset, VBEN_VIEWS, vbenMenuPresetSql } from '../src/compat/vben/index.ts';
import { createWorker } from '../src/entry/worker-handler.ts';
import { ADMIN_PASSWORD, D1_START_MS, makeTestApp, RUNTIMES, type AnyTestApp } from './support/app.ts';
import { d1Shim } from './support/d1-shim.ts';
import { delegationWorld } from './support/delegation-world.ts';

// MENU_PRESET=vben (src/compat/vben/menu-preset.ts, docs/vben.md): our seeded menus shaped for the
// views vue-vben-admin ships, so `menu/all` (vben's backend access mode) resolves every route.
// On Bun and D1: the sidebar it gives, idempotence, grants and buttons untouched, a delegated
// admin seeing the same pages; the view paths checked against the real client's tarball.

const P = '/vben';
const TARBALL = '/work/shared/clients/vue-vben-admin-e3369bd.tar.gz';
const ICONIFY = /^[a-z0-9]+(-[a-z0-9]+)*:[a-z0-9]+(-[a-z0-9]+)*$/;
const VIEWS = new Set<string>(Object.values(VBEN_VIEWS));

interface Route {
  name: string;
  path: string;
  component?: string;
  meta: { title: string; icon?: string; hideInMenu?: boolean };
  children?: Route[];
}
const walk = (rs: Route[]): Route[] => rs.flatMap((r) => [r, ...walk(r.children ?? [])]);
/** The sidebar vben draws: routes not hidden, as `name component icon`, nested. */
const sidebar = (rs: Route[]): unknown[] =>
  rs.filter((r) => !r.meta.hideInMenu).map((r) => (r.children?.length ? [`${r.name} ${r.component} ${r.meta.icon}`, sidebar(r.children)] : `${r.name} ${r.component} ${r.meta.icon}`));

describe('the preset as data', () => {
  test('MENU_PRESET accepts vben; anything else is refused naming the choices', () => {
    expect(parseConfig({ MENU_PRESET: 'vben' }).MENU_PRESET).toBe('vben');
    expect(Object.keys(MENU_PRESETS).sort()).toEqual(['ruoyi', 'vben']);
    try {
      parseConfig({ MENU_PRESET: 'vue-vben' });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toStartWith('Invalid configuration: MENU_PRESET ');
      expect((e as Error).message).toContain('vben (vue-vben-admin views)');
    }
  });

  test('as SQL text (for wrangler d1 execute): the same menus, and a second run changes no row', () => {
    const sqlite = openSqlite(':memory:');
    migrate(sqlite);
    sqlite.exec(vbenMenuPresetSql());
    const shaped = sqlite.query(`SELECT name, component, hidden FROM menus WHERE name IN ('SystemUser', 'SystemDept', 'Workspace', 'SystemBackup') ORDER BY name`).all();
    expect(shaped).toEqual([
      { name: 'SystemBackup', component: '/_core/fallback/coming-soon', hidden: 1 },
      { name: 'SystemDept', component: '/system/dept/list', hidden: 0 },
      { name: 'SystemUser', component: '/system/user/list', hidden: 0 },
      { name: 'Workspace', component: '/dashboard/workspace/index', hidden: 0 },
    ]);
    const before = (sqlite.query('SELECT total_changes() AS n').get() as { n: number }).n;
    sqlite.exec(vbenMenuPresetSql());
    expect((sqlite.query('SELECT total_changes() AS n').get() as { n: number }).n).toBe(before);
  });

  // The view paths the preset names are files of the real client: every one in the playground
  // (which has the system views), the dashboard and _core ones in web-antd as well.
  test.skipIf(!existsSync(TARBALL))('every view the preset names is a view file vben 5.7.0 ships', () => {
    const files = new Set(execFileSync('tar', ['-tzf', TARBALL], { encoding: 'utf8', maxBuffer: 64 << 20 }).split('\n'));
    for (const view of VIEWS) {
      expect(`${view} playground ${files.has(`vue-vben-admin/playground/src/views${view}.vue`)}`).toBe(`${view} playground true`);
      if (!view.startsWith('/system/')) expect(`${view} web-antd ${files.has(`vue-vben-admin/apps/web-antd/src/views${view}.vue`)}`).toBe(`${view} web-antd true`);
    }
  });
  if (!existsSync(TARBALL)) console.log(`skipped the tarball check: ${TARBALL} is not on this machine`);
});

describe('at the first start (Worker entry over a D1 shim)', () => {
  let spies: { mockRestore(): void }[] = [];
  beforeEach(() => {
    spies = (['log', 'error', 'warn'] as const).map((m) => spyOn(console, m).mockImplementation(() => {}));
  });
  afterEach(() => spies.forEach((s) => s.mockRestore()));

  test('MENU_PRESET=vben shapes the menus when the administrator is created', async () => {
    const sqlite = openSqlite(':memory:');
    migrate(sqlite);
    const env = { DB: d1Shim(sqlite), CAPTCHA_ENABLED: 'false', LOG_REQUESTS: 'false', JWT_SECRET: 'vben-preset-secret-vben-preset-secret-42', ADMIN_PASSWORD, MENU_PRESET: 'vben' };
    expect((await createWorker().fetch(new Request('http://worker.test/health'), env)).status).toBe(200);
    const pages = sqlite.query(`SELECT name, component FROM menus WHERE name IN ('SystemUser', 'Analytics') ORDER BY name`).all();
    expect(pages).toEqual([
      { name: 'Analytics', component: '/dashboard/analytics/index' },
      { name: 'SystemUser', component: '/system/user/list' },
    ]);
  }, 30_000); // the admin's password is hashed at production cost
});

for (const runtime of RUNTIMES) {
  describe(`MENU_PRESET=vben on ${runtime}`, () => {
    let t: AnyTestApp;
    let admin: string;
    let delegate: { token: string; roleId: number };
    const before: Record<string, unknown> = {};

    const menuAll = async (token: string) => {
      const r = await t.call('GET', `${P}/menu/all`, { token });
      expect(r.status).toBe(200);
      return (r.json as unknown as { data: Route[] }).data;
    };
    const native = async (token: string) => {
      const r = await t.call('GET', '/app/sysLoginUser/getLoginUserInformation', { token });
      expect(r.status).toBe(200);
      const pages = walk(r.data.menus as Route[] & { id: number; type: string }[])
        .filter((m: any) => m.type === 'menu')
        .map((m: any) => m.id as number)
        .sort((a, b) => a - b);
      return { codes: [...(r.data.permissions as string[])].sort(), pages };
    };
    const grants = () => t.rows(`SELECT role_id, menu_id FROM role_menu ORDER BY 1, 2`);
    const buttons = () => t.rows(`SELECT id, parent_id, permission, status, version FROM menus WHERE type = 'button' ORDER BY id`);
    const everything = async () => JSON.stringify([await t.rows(`SELECT * FROM menus ORDER BY id`), await grants(), await t.rows(`SELECT * FROM cache_versions ORDER BY 1`)]);

    beforeAll(async () => {
      t = await makeTestApp({ runtime, env: { VBEN_API_PREFIX: P } });
      admin = await t.login();
      // A delegated admin (org and below) with a user page, the organisation page and the posts
      // page (which vben has no view for), as it was before the preset.
      const world = await delegationWorld(t, admin, `vp_${runtime}`);
      delegate = await world.caller(['sys:user:page', 'sys:user:edit', 'sys:org:tree', 'sys:post:page'], 'orgAndBelow', world.org.sales);
      before.delegate = await native(delegate.token);
      before.grants = await grants();
      before.buttons = await buttons();
      await applyVbenMenuPreset(t.deps);
    }, D1_START_MS);

    test("menu/all: vben's sidebar, every component one of vben's views, Iconify icons, stable names", async () => {
      const routes = await menuAll(admin);
      expect(sidebar(routes)).toEqual([
        ['Dashboard BasicLayout lucide:layout-dashboard', ['Analytics /dashboard/analytics/index lucide:area-chart', 'Workspace /dashboard/workspace/index carbon:workspace']],
        [
          'System BasicLayout ion:settings-outline',
          ['SystemUser /system/user/list mdi:user', 'SystemRole /system/role/list mdi:account-group', 'SystemMenu /system/menu/list mdi:menu', 'SystemDept /system/dept/list charm:organisation'],
        ],
      ]);
      const all = walk(routes);
      // Hidden routes too: each resolves to a view (our pages vben has none for: its "coming soon").
      for (const r of all) {
        expect(`${r.name} ${r.component}`).toBe(`${r.name} ${r.component === 'BasicLayout' || VIEWS.has(r.component!) ? r.component : '(not a vben view)'}`);
        if (r.meta.icon) expect(r.meta.icon).toMatch(ICONIFY);
        expect(r.path).toStartWith('/');
      }
      expect(all.filter((r) => r.component === 'BasicLayout').every((r) => routes.includes(r))).toBe(true);
      const names = all.map((r) => r.name);
      expect(names.filter((n) => /^Menu\d+$/.test(n))).toEqual([]);
      expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
      expect(all.find((r) => r.name === 'Profile')).toMatchObject({ path: '/profile', component: '/_core/profile/index', meta: { hideInMenu: true } });
      expect(all.find((r) => r.path === '/system/backup')).toMatchObject({ name: 'SystemBackup', component: '/_core/fallback/coming-soon', meta: { hideInMenu: true } });
      const info = await t.call('GET', `${P}/user/info`, { token: admin });
      expect(info.data.homePath).toBe('/dashboard/analytics');
    });

    test('applied again: nothing changes (menus, versions, grants, the menus cache version)', async () => {
      const once = await everything();
      await applyVbenMenuPreset(t.deps);
      expect(await everything()).toBe(once);
    });

    test('every button and grant stays where it was', async () => {
      expect(await grants()).toEqual(before.grants as never);
      expect(await buttons()).toEqual(before.buttons as never);
    });

    test('a delegated admin keeps their codes and pages; vben shows them the same pages and sends them home to one', async () => {
      expect(await native(delegate.token)).toEqual(before.delegate as never);
      const routes = await menuAll(delegate.token);
      expect(sidebar(routes)).toEqual([['System BasicLayout ion:settings-outline', ['SystemUser /system/user/list mdi:user', 'SystemDept /system/dept/list charm:organisation']]]);
      // Posts is theirs still, hidden (vben has no view for it) but routed.
      expect(walk(routes).find((r) => r.path === '/user/post')).toMatchObject({ component: '/_core/fallback/coming-soon', meta: { hideInMenu: true } });
      const codes = await t.call('GET', `${P}/auth/codes`, { token: delegate.token });
      expect([...(codes.data as string[])].sort()).toEqual((before.delegate as { codes: string[] }).codes);
      // Not granted the dashboard: vben's default home (/dashboard) would be its 404.
      const info = await t.call('GET', `${P}/user/info`, { token: delegate.token });
      expect(info.data.homePath).toBe('/system/user');
      expect((await t.call('GET', `${P}/system/user/list?page=1&pageSize=10`, { token: delegate.token })).status).toBe(200);
    });
  });
}
