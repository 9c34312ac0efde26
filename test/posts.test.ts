import { beforeAll, describe, expect, test } from 'bun:test';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { onceBeforeWrite, USER_PASSWORD, userWithCodes, type FixtureUser } from './support/rbac.ts';
import { expectGuarded, expectScenario } from './support/scenario.ts';
import { okData } from './support/std-modules.ts';

// Issue 27 item 4: posts (job positions), the users that hold them (`postIds`, the users page's
// `postId`), and a post's delete refused while a user holds it. On Bun and on D1.

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
      nobody = await userWithCodes(t, [], `post_nobody_${t.runtime}`);
    });
    const addPost = (body: Record<string, unknown>) => okData(t, 'POST', '/app/sysPost/add', admin, body);
    const addUser = (body: Record<string, unknown>) => okData(t, 'POST', '/app/sysUser/add', admin, { password: USER_PASSWORD, ...body });

    test('permission codes: anonymous and forged 401, no code 403 (nothing changed), holder 200', async () => {
      const holder = await userWithCodes(t, ['sys:post:page', 'sys:post:list', 'sys:post:detail', 'sys:post:add', 'sys:post:edit', 'sys:post:delete'], `post_holder_${t.runtime}`);
      const callers = { refused: nobody.token, granted: holder.token };
      const fresh = async () => addPost({ code: `g${++seq}`, name: 'Guarded' });
      await expectGuarded(t, { code: 'sys:post:page', method: 'POST', path: '/app/sysPost/page', request: () => ({ body: {} }) }, callers, ['posts']);
      await expectGuarded(t, { code: 'sys:post:list', method: 'GET', path: '/app/sysPost/list' }, callers, ['posts']);
      await expectGuarded(t, { code: 'sys:post:detail', method: 'GET', path: '/app/sysPost/detail', request: async () => ({ query: `id=${(await fresh()).id}` }) }, callers);
      await expectGuarded(t, { code: 'sys:post:add', method: 'POST', path: '/app/sysPost/add', request: () => ({ body: { code: `a${++seq}`, name: 'A' } }) }, callers, ['posts']);
      await expectGuarded(t, { code: 'sys:post:edit', method: 'POST', path: '/app/sysPost/edit', request: async () => ({ body: { id: (await fresh()).id, version: 1, name: 'E' } }) }, callers);
      await expectGuarded(t, { code: 'sys:post:delete', method: 'POST', path: '/app/sysPost/delete', request: async () => ({ body: { ids: [(await fresh()).id] } }) }, callers);
    });

    describe('posts', () => {
      test('add, detail, page, list (enabled, by sort), edit under the version; refusals change nothing', async () => {
        const ceo = await addPost({ code: 'ceo', name: 'Chief executive', sort: 1 });
        const eng = await addPost({ code: 'eng', name: 'Engineer', sort: 2, remark: 'Builds' });
        const old = await addPost({ code: 'old', name: 'Retired post', sort: 0, status: 'disabled' });
        expect(eng).toMatchObject({ code: 'eng', name: 'Engineer', sort: 2, status: 'enabled', remark: 'Builds', version: 1 });
        expect(await okData(t, 'GET', `/app/sysPost/detail?id=${eng.id}`, admin)).toEqual(eng);
        const listed = (await okData(t, 'GET', '/app/sysPost/list', admin)).map((p: any) => p.code);
        expect(listed.indexOf('ceo')).toBeLessThan(listed.indexOf('eng'));
        expect(listed).not.toContain('old');
        expect((await okData(t, 'POST', '/app/sysPost/page', admin, { params: { name: 'Retired', status: 'disabled' } })).records.map((p: any) => p.id)).toEqual([old.id]);
        const tables = ['posts'];
        await expectScenario(t, { method: 'POST', path: '/app/sysPost/add', token: admin, body: { code: 'CEO', name: 'Again' }, status: 409, unchanged: tables });
        for (const body of [{ code: '', name: 'X' }, { code: '-x', name: 'X' }, { code: 'x', name: '' }, { code: 'x', name: 'X', sort: 'a' }, { code: 'x', name: 'X', id: 1 }]) {
          await expectScenario(t, { method: 'POST', path: '/app/sysPost/add', token: admin, body, status: 400, unchanged: tables });
        }
        await expectScenario(t, { method: 'POST', path: '/app/sysPost/edit', token: admin, body: { id: ceo.id, version: 3, name: 'X' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysPost/edit', token: admin, body: { id: ceo.id, version: 1, code: 'ENG' }, status: 409, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysPost/edit', token: admin, body: { id: 999999, version: 1, name: 'X' }, status: 404, unchanged: tables });
        expect(await okData(t, 'POST', '/app/sysPost/edit', admin, { id: ceo.id, version: 1, name: 'CEO' })).toMatchObject({ name: 'CEO', code: 'ceo', version: 2 });
        expect((await t.call('GET', '/app/sysPost/detail?id=999999', { token: admin })).status).toBe(404);
      });
    });

    describe('users carry postIds', () => {
      test('add, edit (replaces the set), detail, page record and the postId filter; an unknown post changes nothing', async () => {
        const a = await addPost({ code: `pa${t.runtime}`, name: 'A' });
        const b = await addPost({ code: `pb${t.runtime}`, name: 'B' });
        const user = await addUser({ loginName: `holder_${t.runtime}`, postIds: [b.id, a.id, a.id] });
        expect(user.postIds).toEqual([a.id, b.id]);
        expect((await okData(t, 'GET', `/app/sysUser/detail?id=${user.id}`, admin)).postIds).toEqual([a.id, b.id]);
        const byPost = await okData(t, 'POST', '/app/sysUser/page', admin, { params: { postId: b.id } });
        expect(byPost.records.map((u: any) => [u.id, u.postIds])).toEqual([[user.id, [a.id, b.id]]]);
        expect(byPost.total).toBe(1);
        const plain = await addUser({ loginName: `plain_${t.runtime}` });
        expect(plain.postIds).toEqual([]);
        const page = await okData(t, 'POST', '/app/sysUser/page', admin, { pageSize: 100 });
        expect(page.records.find((u: any) => u.id === plain.id).postIds).toEqual([]);
        const tables = ['users', 'user_post'];
        await expectScenario(t, { method: 'POST', path: '/app/sysUser/edit', token: admin, body: { id: user.id, version: user.version, postIds: [a.id, 999999] }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: admin, body: { loginName: `ghost_${t.runtime}`, password: USER_PASSWORD, postIds: [999999] }, status: 400, unchanged: tables });
        await expectScenario(t, { method: 'POST', path: '/app/sysUser/add', token: admin, body: { loginName: `bad_${t.runtime}`, password: USER_PASSWORD, postIds: ['1 OR 1=1'] }, status: 400, unchanged: tables });
        const edited = await okData(t, 'POST', '/app/sysUser/edit', admin, { id: user.id, version: user.version, postIds: [b.id] });
        expect(edited.postIds).toEqual([b.id]);
        expect((await okData(t, 'POST', '/app/sysUser/page', admin, { params: { postId: a.id } })).total).toBe(0);
        // Omitted postIds stay as they are; [] takes every post away.
        const renamed = await okData(t, 'POST', '/app/sysUser/edit', admin, { id: user.id, version: edited.version, nickName: 'Kept' });
        expect(renamed.postIds).toEqual([b.id]);
        expect((await okData(t, 'POST', '/app/sysUser/edit', admin, { id: user.id, version: renamed.version, postIds: [] })).postIds).toEqual([]);
        // The caller's own profile carries them too (the same public user).
        expect((await okData(t, 'GET', '/app/sysLoginUser/getLoginUserInformation', admin)).user.postIds).toEqual([]);
      });

      test("a post's delete is refused while a user holds it (400, nothing deleted); a user's delete takes their posts along", async () => {
        const held = await addPost({ code: `held${t.runtime}`, name: 'Held' });
        const free = await addPost({ code: `free${t.runtime}`, name: 'Free' });
        const user = await addUser({ loginName: `hold_${t.runtime}`, postIds: [held.id] });
        const tables = ['posts', 'user_post'];
        const refused = await expectScenario(t, { method: 'POST', path: '/app/sysPost/delete', token: admin, body: { ids: [free.id, held.id] }, status: 400, unchanged: tables });
        expect(refused.json!.msg).toContain(`post ${held.id}`);
        await okData(t, 'POST', '/app/sysUser/delete', admin, { ids: [user.id] });
        expect(await t.row('SELECT 1 FROM user_post WHERE post_id = ?', held.id)).toBeNull();
        await okData(t, 'POST', '/app/sysPost/delete', admin, { ids: [free.id, held.id, 999999] });
        expect(await t.row('SELECT 1 FROM posts WHERE id IN (?, ?)', free.id, held.id)).toBeNull();
      });

      test('the rule is judged inside the write: a grant landing after any early read still refuses the delete', async () => {
        const post = await addPost({ code: `race${t.runtime}`, name: 'Race' });
        const user = await addUser({ loginName: `race_${t.runtime}` });
        const race = onceBeforeWrite(t, () => t.exec('INSERT INTO user_post (user_id, post_id) VALUES (?, ?)', user.id, post.id));
        try {
          const r = await t.call('POST', '/app/sysPost/delete', { token: admin, body: { ids: [post.id] } });
          expect(race.ran()).toBe(true);
          expect(r.status).toBe(400);
        } finally {
          race.restore();
        }
        expect(await t.row('SELECT id FROM posts WHERE id = ?', post.id)).not.toBeNull();
        expect(await t.row('SELECT 1 FROM user_post WHERE post_id = ?', post.id)).not.toBeNull();
      });

      test('a post deleted after the user edit was planned: the edit is refused whole (400), nothing changed', async () => {
        const post = await addPost({ code: `gone${t.runtime}`, name: 'Gone' });
        const user = await addUser({ loginName: `late_${t.runtime}` });
        const tables = ['users', 'user_post'];
        const race = onceBeforeWrite(t, () => t.exec('DELETE FROM posts WHERE id = ?', post.id));
        try {
          await expectScenario(t, { method: 'POST', path: '/app/sysUser/edit', token: admin, body: { id: user.id, version: user.version, nickName: 'Late', postIds: [post.id] }, status: 400, unchanged: tables });
          expect(race.ran()).toBe(true);
        } finally {
          race.restore();
        }
      });
    });
  },
);
