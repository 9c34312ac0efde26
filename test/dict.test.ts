import { beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../src/app.ts';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { userWithCodes, type FixtureUser } from './support/rbac.ts';
import { expectGuarded, expectScenario } from './support/scenario.ts';
import { okData, rowsReadBy } from './support/std-modules.ts';

// Issue 27 item 1: dictionary types and items (contract "Standard modules"), and the cached reads
// every logged-in user makes (sysDict), on Bun and on D1.

let t: AnyTestApp;
let admin: string;
let nobody: FixtureUser;
let seq = 0;

perRuntime(
  (app, token) => {
    t = app;
    admin = token;
  },
  () => {
    beforeAll(async () => {
      nobody = await userWithCodes(t, [], `dict_nobody_${t.runtime}`);
    });

    const addType = (body: Record<string, unknown>) => okData(t, 'POST', '/app/sysDictType/add', admin, body);
    const addItem = (body: Record<string, unknown>) => okData(t, 'POST', '/app/sysDictData/add', admin, body);
    const items = (code: string, token = admin, headers: Record<string, string> = {}) => t.call('GET', `/app/sysDict/items?code=${code}`, { token, headers });
    /** A conditional read: its status and ETag (a 304 has no body to parse). */
    const ifNoneMatch = async (path: string, token: string | undefined, etag: string) => {
      const res = await t.request(path, { headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'if-none-match': etag } });
      return { status: res.status, etag: res.headers.get('etag'), body: await res.text() };
    };

    describe('seeded dictionaries', () => {
      test('the types the built-in fields use, with our API values and the labels RuoYi users expect', async () => {
        const all = await okData(t, 'GET', '/app/sysDict/all', nobody.token);
        for (const code of ['sys_normal_disable', 'sys_user_sex', 'sys_yes_no', 'sys_notice_type', 'sys_notice_status', 'sys_job_status', 'sys_common_status']) {
          expect(all[code]?.length).toBeGreaterThan(0);
        }
        expect(all.sys_normal_disable.map((i: any) => [i.value, i.label, i.tagType])).toEqual([
          ['enabled', '正常', 'primary'],
          ['disabled', '停用', 'danger'],
        ]);
        expect(all.sys_common_status.map((i: any) => i.value)).toEqual(['success', 'failure']);
        expect(all.sys_notice_type.map((i: any) => i.value)).toEqual(['notice', 'announcement']);
        expect(all.sys_notice_status.map((i: any) => i.value)).toEqual(['draft', 'published', 'closed']);
      });
    });

    describe('permission codes', () => {
      test('each operation: anonymous and forged 401, no code 403 (nothing changed), holder 200', async () => {
        const holder = await userWithCodes(
          t,
          ['sys:dictType:page', 'sys:dictType:detail', 'sys:dictType:add', 'sys:dictType:edit', 'sys:dictType:delete', 'sys:dictData:page', 'sys:dictData:detail', 'sys:dictData:add', 'sys:dictData:edit', 'sys:dictData:delete'],
          `dict_holder_${t.runtime}`,
        );
        const callers = { refused: nobody.token, granted: holder.token };
        const tables = ['dict_types', 'dict_data', 'cache_versions'];
        const fresh = async () => addType({ name: 'Guarded', code: `guarded_${++seq}` });
        await expectGuarded(t, { code: 'sys:dictType:page', method: 'POST', path: '/app/sysDictType/page', request: () => ({ body: {} }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictType:detail', method: 'GET', path: '/app/sysDictType/detail', request: () => ({ query: 'id=1' }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictType:add', method: 'POST', path: '/app/sysDictType/add', request: () => ({ body: { name: 'G', code: `g_add_${++seq}` } }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictType:edit', method: 'POST', path: '/app/sysDictType/edit', request: async () => ({ body: { id: (await fresh()).id, version: 1, name: 'Edited' } }) }, callers, ['dict_data']);
        await expectGuarded(t, { code: 'sys:dictType:delete', method: 'POST', path: '/app/sysDictType/delete', request: async () => ({ body: { ids: [(await fresh()).id] } }) }, callers, ['dict_data']);
        const item = async () => addItem({ typeCode: 'sys_user_sex', label: 'X', value: `x${++seq}` });
        await expectGuarded(t, { code: 'sys:dictData:page', method: 'POST', path: '/app/sysDictData/page', request: () => ({ body: {} }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictData:detail', method: 'GET', path: '/app/sysDictData/detail', request: () => ({ query: 'id=1' }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictData:add', method: 'POST', path: '/app/sysDictData/add', request: () => ({ body: { typeCode: 'sys_user_sex', label: 'Y', value: `y${++seq}` } }) }, callers, tables);
        await expectGuarded(t, { code: 'sys:dictData:edit', method: 'POST', path: '/app/sysDictData/edit', request: async () => ({ body: { id: (await item()).id, version: 1, label: 'Z' } }) }, callers, ['dict_types']);
        await expectGuarded(t, { code: 'sys:dictData:delete', method: 'POST', path: '/app/sysDictData/delete', request: async () => ({ body: { ids: [(await item()).id] } }) }, callers, ['dict_types']);
        // The reads for everyone: any logged-in user, no code; nobody without a token.
        for (const path of ['/app/sysDict/items?code=sys_user_sex', '/app/sysDict/all']) {
          expect((await t.call('GET', path)).status).toBe(401);
          expect((await t.call('GET', path, { token: 'not-a-jwt-token-at-all' })).status).toBe(401);
          expect((await t.call('GET', path, { token: nobody.token })).status).toBe(200);
        }
      });
    });

    describe('types', () => {
      test('add, detail, page filters; a taken or malformed code changes nothing', async () => {
        const type = await addType({ name: 'Colours', code: 'app_colour', remark: 'Paint' });
        expect(type).toMatchObject({ name: 'Colours', code: 'app_colour', status: 'enabled', remark: 'Paint', version: 1 });
        expect(await okData(t, 'GET', `/app/sysDictType/detail?id=${type.id}`, admin)).toEqual(type);
        const page = await okData(t, 'POST', '/app/sysDictType/page', admin, { params: { code: 'colour' } });
        expect(page.records.map((r: any) => r.code)).toEqual(['app_colour']);
        const tables = ['dict_types', 'dict_data', 'cache_versions'];
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/add', token: admin, body: { name: 'Again', code: 'app_colour' }, status: 409, unchanged: tables });
        for (const code of ['App_Colour', 'has space', '', 'x'.repeat(65), 'semi;colon']) {
          await expectScenario(t, { method: 'POST', path: '/app/sysDictType/add', token: admin, body: { name: 'Bad', code }, status: 400, unchanged: tables });
        }
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/add', token: admin, body: { name: 'Extra', code: 'app_extra', id: 5 }, status: 400, unchanged: tables });
        expect((await t.call('GET', '/app/sysDictType/detail?id=999999', { token: admin })).status).toBe(404);
      });

      test('edit: partial under the version (409 stale, 404 unknown, nothing changed); a new code carries the items', async () => {
        const type = await addType({ name: 'Sizes', code: 'app_size' });
        await addItem({ typeCode: 'app_size', label: 'Small', value: 's' });
        const tables = ['dict_types', 'dict_data', 'cache_versions'];
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/edit', token: admin, body: { id: type.id, version: 2, name: 'X' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/edit', token: admin, body: { id: 999999, version: 1, name: 'X' }, status: 404, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/edit', token: admin, body: { id: type.id, version: 1, code: 'sys_user_sex' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/edit', token: admin, body: { id: type.id, version: 1, createdAt: 'x' }, status: 400, unchanged: tables });
        const edited = await okData(t, 'POST', '/app/sysDictType/edit', admin, { id: type.id, version: 1, code: 'app_sizes' });
        expect(edited).toMatchObject({ name: 'Sizes', code: 'app_sizes', version: 2 });
        expect((await items('app_sizes')).data.map((i: any) => i.value)).toEqual(['s']);
        expect((await items('app_size')).data).toEqual([]);
      });

      test('delete removes the types with their items; unknown ids are ignored', async () => {
        const type = await addType({ name: 'Gone', code: 'app_gone' });
        await addItem({ typeCode: 'app_gone', label: 'A', value: 'a' });
        await okData(t, 'POST', '/app/sysDictType/delete', admin, { ids: [type.id, 999999] });
        expect(await t.row(`SELECT id FROM dict_types WHERE code = 'app_gone'`)).toBeNull();
        expect(await t.row(`SELECT id FROM dict_data WHERE type_code = 'app_gone'`)).toBeNull();
        await expectScenario(t, { method: 'POST', path: '/app/sysDictType/delete', token: admin, body: { ids: [] }, status: 400, unchanged: ['dict_types'] });
      });
    });

    describe('items', () => {
      test('add to an unknown type is 400, a taken value 409, bad fields 400: nothing changed', async () => {
        await addType({ name: 'Shapes', code: 'app_shape' });
        const item = await addItem({ typeCode: 'app_shape', label: 'Round', value: 'round', sort: 2, tagType: 'success', cssClass: 'text-ok', isDefault: true });
        expect(item).toMatchObject({ typeCode: 'app_shape', label: 'Round', value: 'round', sort: 2, status: 'enabled', tagType: 'success', cssClass: 'text-ok', isDefault: true, version: 1 });
        const tables = ['dict_types', 'dict_data', 'cache_versions'];
        await expectScenario(t, { method: 'POST', path: '/app/sysDictData/add', token: admin, body: { typeCode: 'app_nothing', label: 'A', value: 'a' }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictData/add', token: admin, body: { typeCode: 'app_shape', label: 'Again', value: 'round' }, status: 409, unchanged: tables });
        for (const bad of [{ tagType: 'purple' }, { cssClass: '"><script>' }, { isDefault: 'yes' }, { value: '' }, { label: '' }, { sort: 1.5 }]) {
          await expectScenario(t, { method: 'POST', path: '/app/sysDictData/add', token: admin, body: { typeCode: 'app_shape', label: 'L', value: 'v', ...bad }, status: 400, unchanged: tables });
        }
        // The same value in another type is fine.
        await addItem({ typeCode: 'sys_user_sex', label: 'Round', value: 'round' });
      });

      test('edit under the version; moving to an unknown type is 400; page by type', async () => {
        await addType({ name: 'Moods', code: 'app_mood' });
        const item = await addItem({ typeCode: 'app_mood', label: 'Happy', value: 'happy' });
        const tables = ['dict_types', 'dict_data', 'cache_versions'];
        await expectScenario(t, { method: 'POST', path: '/app/sysDictData/edit', token: admin, body: { id: item.id, version: 1, typeCode: 'app_none' }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictData/edit', token: admin, body: { id: item.id, version: 9, label: 'X' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysDictData/edit', token: admin, body: { id: 999999, version: 1, label: 'X' }, status: 404, unchanged: tables });
        const edited = await okData(t, 'POST', '/app/sysDictData/edit', admin, { id: item.id, version: 1, label: 'Glad', isDefault: true, cssClass: null });
        expect(edited).toMatchObject({ label: 'Glad', value: 'happy', isDefault: true, cssClass: null, version: 2 });
        const page = await okData(t, 'POST', '/app/sysDictData/page', admin, { params: { typeCode: 'app_mood' }, sortField: 'sort', sortOrder: 'asc' });
        expect(page.records.map((r: any) => r.value)).toEqual(['happy']);
        expect(page.total).toBe(1);
        await okData(t, 'POST', '/app/sysDictData/delete', admin, { ids: [item.id] });
        expect((await okData(t, 'POST', '/app/sysDictData/page', admin, { params: { typeCode: 'app_mood' } })).total).toBe(0);
      });

      test('op log: every write records a row, refusals included', async () => {
        const before = await t.count('op_log');
        await t.call('POST', '/app/sysDictType/add', { token: admin, body: { name: 'Logged', code: 'app_logged' } });
        await t.call('POST', '/app/sysDictType/add', { token: admin, body: { name: 'Logged', code: 'app_logged' } });
        const rows = await t.rows<{ module: string; action: string; status: number }>(`SELECT module, action, status FROM op_log ORDER BY id DESC LIMIT 2`);
        expect(await t.count('op_log')).toBe(before + 2);
        expect(rows.reverse()).toEqual([
          { module: 'sysDictType', action: 'add', status: 200 },
          { module: 'sysDictType', action: 'add', status: 409 },
        ]);
      });
    });

    describe('sysDict: cached reads for every logged-in user', () => {
      test('items: the enabled items of an enabled type, by sort; [] for a disabled or unknown type', async () => {
        await addType({ name: 'Fruit', code: 'app_fruit' });
        await addItem({ typeCode: 'app_fruit', label: 'Pear', value: 'pear', sort: 2 });
        await addItem({ typeCode: 'app_fruit', label: 'Apple', value: 'apple', sort: 1 });
        const off = await addItem({ typeCode: 'app_fruit', label: 'Plum', value: 'plum', sort: 3, status: 'disabled' });
        const got = await items('app_fruit', nobody.token);
        expect(got.status).toBe(200);
        expect(got.data.map((i: any) => i.value)).toEqual(['apple', 'pear']);
        expect(Object.keys(got.data[0]).sort()).toEqual(['cssClass', 'id', 'isDefault', 'label', 'remark', 'sort', 'tagType', 'typeCode', 'value']);
        expect(off.status).toBe('disabled');
        expect((await items('app_nothing_here', nobody.token)).data).toEqual([]);
        const type = (await okData(t, 'POST', '/app/sysDictType/page', admin, { params: { code: 'app_fruit' } })).records[0];
        await okData(t, 'POST', '/app/sysDictType/edit', admin, { id: type.id, version: type.version, status: 'disabled' });
        expect((await items('app_fruit', nobody.token)).data).toEqual([]);
        expect((await okData(t, 'GET', '/app/sysDict/all', nobody.token)).app_fruit).toBeUndefined();
        expect((await t.call('GET', '/app/sysDict/items?code=Bad%20Code', { token: nobody.token })).status).toBe(400);
        expect((await t.call('GET', '/app/sysDict/items', { token: nobody.token })).status).toBe(400);
      });

      test('served from the cache while nothing changed; a write is seen on the very next request, in another isolate too', async () => {
        await addType({ name: 'Cached', code: 'app_cached' });
        for (const v of ['a', 'b', 'c']) await addItem({ typeCode: 'app_cached', label: v.toUpperCase(), value: v });
        const read = rowsReadBy(t, /FROM dict_types t LEFT JOIN dict_data/);
        await items('app_cached');
        read.take();
        const other = createApp({ ...t.deps }); // another deps object: a cache of its own, as another isolate
        const viaOther = async (code: string) => (await (await other.request(`/app/sysDict/items?code=${code}`, { headers: { authorization: `Bearer ${admin}` } })).json()) as any;
        expect((await viaOther('app_cached')).data.length).toBe(3);
        expect(read.take()).toBeGreaterThan(0); // its first request filled its cache
        expect((await items('app_cached')).data.length).toBe(3);
        expect((await viaOther('app_cached')).data.length).toBe(3);
        expect(read.take()).toBe(0); // both served from their caches
        const added = await addItem({ typeCode: 'app_cached', label: 'Other', value: `other_${t.runtime}`, sort: 9 });
        expect((await items('app_cached')).data.map((i: any) => i.value)).toContain(added.value);
        expect((await viaOther('app_cached')).data.map((i: any) => i.value)).toContain(added.value);
        expect(read.take()).toBeGreaterThan(0);
        await okData(t, 'POST', '/app/sysDictData/delete', admin, { ids: [added.id] });
        expect((await viaOther('app_cached')).data.map((i: any) => i.value)).not.toContain(added.value);
        // A write behind the app's back (another process's) is seen too: the trigger moved the version.
        await t.exec(`UPDATE dict_data SET label = 'Alpha' WHERE type_code = 'app_cached' AND value = 'a'`);
        expect((await items('app_cached')).data[0].label).toBe('Alpha');
        expect((await viaOther('app_cached')).data[0].label).toBe('Alpha');
        await t.exec(`UPDATE dict_data SET label = 'A' WHERE type_code = 'app_cached' AND value = 'a'`);
      });

      test('ETag and 304: a matching If-None-Match gets no body; a write gives a new ETag; every answer judges the caller', async () => {
        const first = await items('sys_yes_no', nobody.token);
        const etag = first.res.headers.get('etag')!;
        expect(etag).toMatch(/^W\/"[0-9a-f]{32}"$/);
        expect(first.res.headers.get('cache-control')).toBe('no-store');
        expect(await ifNoneMatch('/app/sysDict/items?code=sys_yes_no', nobody.token, etag)).toEqual({ status: 304, etag, body: '' });
        // Another type has its own tag; the tag of `all` is not an item list's.
        const other = await items('sys_user_sex', nobody.token, { 'if-none-match': etag });
        expect(other.status).toBe(200);
        const all = await t.call('GET', '/app/sysDict/all', { token: nobody.token });
        const allTag = all.res.headers.get('etag')!;
        expect((await ifNoneMatch('/app/sysDict/all', nobody.token, allTag)).status).toBe(304);
        // A write to the type: the old tag no longer matches (the next request), the new one does.
        const yes = first.data[0];
        const item = await okData(t, 'GET', `/app/sysDictData/detail?id=${yes.id}`, admin);
        await okData(t, 'POST', '/app/sysDictData/edit', admin, { id: item.id, version: item.version, label: '是的' });
        const changed = await items('sys_yes_no', nobody.token, { 'if-none-match': etag });
        expect(changed.status).toBe(200);
        expect(changed.data[0].label).toBe('是的');
        expect(changed.res.headers.get('etag')).not.toBe(etag);
        expect((await ifNoneMatch('/app/sysDict/all', nobody.token, allTag)).status).toBe(200);
        await okData(t, 'POST', '/app/sysDictData/edit', admin, { id: item.id, version: item.version + 1, label: '是' });
        // The same content again: the tag is the content's, so the first tag matches again.
        expect((await ifNoneMatch('/app/sysDict/items?code=sys_yes_no', nobody.token, etag)).status).toBe(304);
        // A revoked token never gets a 304 (nor a 200): the caller is judged before any answer.
        const leaving = await userWithCodes(t, [], `dict_leaving_${t.runtime}`);
        expect((await ifNoneMatch('/app/sysDict/items?code=sys_yes_no', leaving.token, etag)).status).toBe(304);
        expect((await t.call('POST', '/auth/logout', { token: leaving.token })).status).toBe(200);
        const revoked = await ifNoneMatch('/app/sysDict/items?code=sys_yes_no', leaving.token, etag);
        expect([revoked.status, JSON.parse(revoked.body).status, revoked.etag]).toEqual([401, 401, null]);
        expect((await ifNoneMatch('/app/sysDict/items?code=sys_yes_no', undefined, etag)).status).toBe(401);
        expect((await ifNoneMatch('/app/sysDict/all', 'not-a-jwt-token-at-all', allTag)).status).toBe(401);
      });

      test('without its version row (a damaged database) the cache is never trusted', async () => {
        const read = rowsReadBy(t, /FROM dict_types t LEFT JOIN dict_data/);
        const { n } = (await t.row<{ n: number }>(`SELECT n FROM cache_versions WHERE name = 'dicts'`))!;
        await t.exec(`DELETE FROM cache_versions WHERE name = 'dicts'`);
        try {
          await items('sys_yes_no');
          read.take();
          await t.exec(`UPDATE dict_data SET label = 'Yes' WHERE type_code = 'sys_yes_no' AND value = 'true'`);
          // No trigger can bump a missing row: only an untrusted cache sees the change.
          expect((await items('sys_yes_no')).data[0].label).toBe('Yes');
          expect(read.take()).toBeGreaterThan(0);
        } finally {
          await t.exec(`UPDATE dict_data SET label = '是' WHERE type_code = 'sys_yes_no' AND value = 'true'`);
          await t.exec(`INSERT INTO cache_versions (name, n) VALUES ('dicts', ?)`, n + 1000);
        }
      });
    });
  },
);
