import { beforeAll, describe, expect, test } from 'bun:test';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { userWithCodes, type FixtureUser } from './support/rbac.ts';
import { expectGuarded, expectScenario } from './support/scenario.ts';
import { okData } from './support/std-modules.ts';

// Issue 27 item 3: notices (contract "Standard modules"): sanitised rich text, data scope by
// author on the management operations, and the latest published ones with per-user read marks for
// every logged-in user. On Bun and on D1.

let t: AnyTestApp;
let admin: string;
let nobody: FixtureUser;
let seq = 0;

const ALL_CODES = ['sys:notice:page', 'sys:notice:detail', 'sys:notice:add', 'sys:notice:edit', 'sys:notice:delete'];

perRuntime(
  (app, token) => {
    t = app;
    admin = token;
  },
  () => {
    beforeAll(async () => {
      nobody = await userWithCodes(t, [], `notice_nobody_${t.runtime}`);
    });
    const add = (body: Record<string, unknown>, token = admin) => okData(t, 'POST', '/app/sysNotice/add', token, { type: 'notice', ...body });
    const latest = (token: string, query = '') => okData(t, 'GET', `/app/sysNotice/latest${query}`, token);

    test('permission codes: anonymous and forged 401, no code 403 (nothing changed), holder 200; latest and markRead for anyone logged in', async () => {
      const holder = await userWithCodes(t, ALL_CODES, `notice_holder_${t.runtime}`);
      const callers = { refused: nobody.token, granted: holder.token };
      const mine = async () => add({ title: `Guarded ${++seq}` }, holder.token);
      await expectGuarded(t, { code: 'sys:notice:page', method: 'POST', path: '/app/sysNotice/page', request: () => ({ body: {} }) }, callers, ['notices']);
      await expectGuarded(t, { code: 'sys:notice:detail', method: 'GET', path: '/app/sysNotice/detail', request: async () => ({ query: `id=${(await mine()).id}` }) }, callers);
      await expectGuarded(t, { code: 'sys:notice:add', method: 'POST', path: '/app/sysNotice/add', request: () => ({ body: { title: 'T', type: 'notice' } }) }, callers, ['notices']);
      await expectGuarded(t, { code: 'sys:notice:edit', method: 'POST', path: '/app/sysNotice/edit', request: async () => ({ body: { id: (await mine()).id, version: 1, title: 'E' } }) }, callers);
      await expectGuarded(t, { code: 'sys:notice:delete', method: 'POST', path: '/app/sysNotice/delete', request: async () => ({ body: { ids: [(await mine()).id] } }) }, callers);
      for (const token of [undefined, 'not-a-jwt-token-at-all']) {
        expect((await t.call('GET', '/app/sysNotice/latest', { token })).status).toBe(401);
        expect((await t.call('POST', '/app/sysNotice/markRead', { token, body: { ids: [1] } })).status).toBe(401);
      }
      expect((await t.call('GET', '/app/sysNotice/latest', { token: nobody.token })).status).toBe(200);
      expect((await t.call('POST', '/app/sysNotice/markRead', { token: nobody.token, body: { ids: [1] } })).status).toBe(200);
    });

    describe('records', () => {
      test('add (the caller is the author), detail, page filters, edit under the version, delete; refusals change nothing', async () => {
        const notice = await add({ title: 'Maintenance window', type: 'announcement', content: '<p>Saturday <strong>02:00</strong></p>' });
        expect(notice).toMatchObject({ title: 'Maintenance window', type: 'announcement', status: 'draft', content: '<p>Saturday <strong>02:00</strong></p>', createdByName: 'admin', version: 1 });
        expect(notice.createdBy).toBe(1);
        expect(await okData(t, 'GET', `/app/sysNotice/detail?id=${notice.id}`, admin)).toEqual(notice);
        const page = await okData(t, 'POST', '/app/sysNotice/page', admin, { params: { title: 'Maintenance', type: 'announcement', status: 'draft', createdBy: 1 } });
        expect(page.records.map((r: any) => r.id)).toEqual([notice.id]);
        const tables = ['notices', 'notice_reads'];
        for (const body of [{ title: '', type: 'notice' }, { title: 'T', type: 'memo' }, { title: 'T', type: 'notice', status: 'live' }, { title: 'T', type: 'notice', createdBy: 5 }, { title: 'T', type: 'notice', content: 'x'.repeat(200_001) }]) {
          await expectScenario(t, { method: 'POST', path: '/app/sysNotice/add', token: admin, body, status: 400, unchanged: tables });
        }
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/edit', token: admin, body: { id: notice.id, version: 2, title: 'X' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/edit', token: admin, body: { id: 999999, version: 1, title: 'X' }, status: 404, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/edit', token: admin, body: { id: notice.id, version: 1, createdByName: 'x' }, status: 400, unchanged: tables });
        const edited = await okData(t, 'POST', '/app/sysNotice/edit', admin, { id: notice.id, version: 1, status: 'published' });
        expect(edited).toMatchObject({ status: 'published', title: 'Maintenance window', version: 2 });
        expect((await t.call('GET', '/app/sysNotice/detail?id=999999', { token: admin })).status).toBe(404);
        await okData(t, 'POST', '/app/sysNotice/delete', admin, { ids: [notice.id, 999999] });
        expect((await t.call('GET', `/app/sysNotice/detail?id=${notice.id}`, { token: admin })).status).toBe(404);
      });

      test('content is sanitised on write (add and edit): no script, handler, javascript: URL or external resource survives, through the API', async () => {
        const vectors = [
          '<script>alert(1)</script><p>ok</p>',
          '<p onclick="alert(1)" onmouseover=alert(2)>click</p>',
          '<a href="javascript:alert(1)">link</a><a href="JaVaScRiPt&colon;alert(1)">x</a><a href="java&#x09;script:alert(1)">y</a>',
          '<img src="https://evil.example/pixel.png"><img src="//evil.example/x.png"><img src=x onerror=alert(1)><img src="data:image/svg+xml;base64,PHN2Zz4=">',
          '<iframe src="https://evil.example"></iframe><object data="x"></object><embed src="x"><svg><script>alert(1)</script></svg>',
          '<p style="background:url(https://evil.example/x)">s</p><style>@import "https://evil.example/x.css";</style><link rel=stylesheet href="https://evil.example/y.css">',
          '<form action="https://evil.example"><input name=x><button formaction="javascript:alert(1)">go</button></form>',
          '<math><mi xlink:href="javascript:alert(1)">m</mi></math><base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=https://evil.example">',
        ];
        const bad = /<script|<iframe|<object|<embed|<svg|<style|<link|<form|<base|<meta|\son\w+=|javascript:|evil\.example|data:/i;
        const notice = await add({ title: 'XSS', content: vectors.join('') , status: 'published' });
        expect(notice.content).not.toMatch(bad);
        expect(notice.content).toContain('<p>ok</p>');
        expect((await okData(t, 'GET', `/app/sysNotice/detail?id=${notice.id}`, admin)).content).not.toMatch(bad);
        expect((await latest(nobody.token, '?limit=50')).records.find((r: any) => r.id === notice.id).content).not.toMatch(bad);
        const stored = await t.row<{ content: string }>('SELECT content FROM notices WHERE id = ?', notice.id);
        expect(stored!.content).not.toMatch(bad);
        // A picture of this service stays; a safe link gets rel=noopener.
        const edited = await okData(t, 'POST', '/app/sysNotice/edit', admin, {
          id: notice.id,
          version: 1,
          content: '<p><img src="/app/sysImage/preview?id=7" alt="chart"><a href="https://example.org/doc" target="_blank">doc</a></p><script>x</script>',
        });
        expect(edited.content).toBe('<p><img src="/app/sysImage/preview?id=7" alt="chart" /><a href="https://example.org/doc" target="_blank" rel="noopener noreferrer nofollow">doc</a></p>');
        // The op log stores no raw HTML.
        const logged = await t.rows<{ params: string }>(`SELECT params FROM op_log WHERE module = 'sysNotice' AND action IN ('add', 'edit')`);
        expect(logged.length).toBeGreaterThan(0);
        expect(logged.some((r) => /<script|<p/.test(r.params))).toBe(false);
        await okData(t, 'POST', '/app/sysNotice/delete', admin, { ids: [notice.id] });
      });
    });

    describe('latest and read marks', () => {
      test('published only, newest first, limit (default 5, at most 50); read marks and the unread count per user', async () => {
        const reader = await userWithCodes(t, [], `notice_reader_${t.runtime}`);
        const base = await latest(reader.token, '?limit=50');
        const ids: number[] = [];
        for (let i = 0; i < 7; i++) {
          t.clock.advance(1000);
          ids.push((await add({ title: `News ${i}`, status: 'published' })).id);
        }
        t.clock.advance(1000);
        const draft = await add({ title: 'Draft', status: 'draft' });
        const closed = await add({ title: 'Closed', status: 'closed' });
        const first = await latest(reader.token);
        expect(first.records.map((r: any) => r.id)).toEqual(ids.slice(2).reverse());
        expect(first.records.every((r: any) => r.read === false)).toBe(true);
        expect(first.unread).toBe(base.unread + 7);
        expect((await latest(reader.token, '?limit=2')).records.map((r: any) => r.id)).toEqual([ids[6], ids[5]]);
        for (const q of ['?limit=0', '?limit=51', '?limit=-1', '?limit=abc', '?limit=5&x=1']) expect((await t.call('GET', `/app/sysNotice/latest${q}`, { token: reader.token })).status).toBe(400);
        // Marks: published ones only (a draft, a closed or unknown id is ignored); twice changes nothing.
        await okData(t, 'POST', '/app/sysNotice/markRead', reader.token, { ids: [ids[6], ids[5], draft.id, closed.id, 999999] });
        await okData(t, 'POST', '/app/sysNotice/markRead', reader.token, { ids: [ids[6]] });
        const after = await latest(reader.token, '?limit=3');
        expect(after.records.map((r: any) => [r.id, r.read])).toEqual([
          [ids[6], true],
          [ids[5], true],
          [ids[4], false],
        ]);
        expect(after.unread).toBe(first.unread - 2);
        expect(await t.count('notice_reads')).toBeGreaterThanOrEqual(2);
        // Another user's marks are their own.
        expect((await latest(nobody.token, '?limit=1')).records[0].read).toBe(false);
        // A bad body changes nothing.
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/markRead', token: reader.token, body: { ids: ['1 OR 1=1'] }, status: 400, unchanged: ['notice_reads'] });
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/markRead', token: reader.token, body: { ids: [] }, status: 400, unchanged: ['notice_reads'] });
        // Closing a notice takes it out of latest and out of the unread count.
        const n4 = await okData(t, 'GET', `/app/sysNotice/detail?id=${ids[4]}`, admin);
        await okData(t, 'POST', '/app/sysNotice/edit', admin, { id: n4.id, version: n4.version, status: 'closed' });
        const closedNow = await latest(reader.token, '?limit=50');
        expect(closedNow.records.map((r: any) => r.id)).not.toContain(ids[4]);
        expect(closedNow.unread).toBe(after.unread - 1);
        // Deleting a notice takes its read marks along.
        await okData(t, 'POST', '/app/sysNotice/delete', admin, { ids: [ids[6]] });
        expect(await t.row('SELECT 1 FROM notice_reads WHERE notice_id = ?', ids[6]!)).toBeNull();
      });
    });

    describe('data scope: the management operations see notices by authors in the caller\'s scope', () => {
      test('a caller of scope self sees, edits and deletes only their own; every published notice is in everyone\'s latest', async () => {
        const writer = await userWithCodes(t, ALL_CODES, `notice_self_${t.runtime}`);
        await t.exec(`UPDATE roles SET data_scope = 'self' WHERE id = ?`, writer.roleId);
        const theirs = await add({ title: 'By admin', status: 'published' });
        const own = await add({ title: 'By writer', status: 'published' }, writer.token);
        expect(own.createdBy).toBe(writer.userId);
        const page = await okData(t, 'POST', '/app/sysNotice/page', writer.token, { pageSize: 100 });
        expect(page.records.map((r: any) => r.id)).toEqual([own.id]);
        expect(page.total).toBe(1);
        expect((await t.call('GET', `/app/sysNotice/detail?id=${theirs.id}`, { token: writer.token })).status).toBe(404);
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/edit', token: writer.token, body: { id: theirs.id, version: 1, title: 'Mine now' }, status: 404, unchanged: ['notices'] });
        await expectScenario(t, { method: 'POST', path: '/app/sysNotice/delete', token: writer.token, body: { ids: [theirs.id] }, status: 200, unchanged: ['notices'] });
        expect((await okData(t, 'POST', '/app/sysNotice/edit', writer.token, { id: own.id, version: 1, title: 'Mine' })).title).toBe('Mine');
        const seen = (await latest(writer.token, '?limit=50')).records.map((r: any) => r.id);
        expect(seen).toContain(theirs.id);
        expect(seen).toContain(own.id);
        // The super admin sees both.
        expect((await okData(t, 'POST', '/app/sysNotice/page', admin, { pageSize: 100 })).records.map((r: any) => r.id)).toEqual(expect.arrayContaining([theirs.id, own.id]));
        await okData(t, 'POST', '/app/sysNotice/delete', writer.token, { ids: [own.id] });
        expect(await t.row('SELECT id FROM notices WHERE id = ?', own.id)).toBeNull();
      });
    });
  },
);
