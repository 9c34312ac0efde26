import { beforeAll, describe, expect, test } from 'bun:test';
import { D1_START_MS, RUNTIMES, makeTestApp, type AnyTestApp } from './support/app.ts';
import { onceBeforeWrite, snapshot, userWithCodes, withWriteBarrier } from './support/rbac.ts';

/**
 * sysOrg: one tree, unique codes (409), no cycles (400), delete refused while children or users
 * remain (400), optimistic version (409); a caller sees and writes only organisations in their
 * data scope (404 outside, 403 for placing one outside). One body per runtime (bun:sqlite, and a
 * real D1 in workerd), races included: the closure-table moves and the guards run as one D1 batch.
 */

const TABLES = ['orgs', 'org_closure', 'users', 'role_scope_org'];

for (const runtime of RUNTIMES) {
  describe(`organisations (${runtime})`, () => {
    let t: AnyTestApp;
    let admin: string;
    const post = (path: string, body: unknown, token = admin) => t.call('POST', path, { token, body });
    const get = (path: string, token = admin) => t.call('GET', path, { token });
    const snap = () => snapshot(t, ...TABLES);

    async function add(name: string, parentId = 0, token = admin) {
      const r = await post('/app/sysOrg/add', { name, code: name, parentId }, token);
      expect(`${r.status} ${r.json.msg}`).toBe('200 SUCCESS');
      return r.data as { id: number; version: number; parentId: number };
    }

    /** Ancestors of an org from the closure table, nearest first (depth order). */
    const ancestors = async (id: number) =>
      (await t.rows<{ a: number }>('SELECT ancestor_id AS a FROM org_closure WHERE descendant_id = ? ORDER BY depth', id)).map((r) => r.a);

    /** Sets a role's data scope directly (the API for it is tested in data-scope.test.ts). */
    async function setScope(roleId: number, scope: string, orgIds: number[] = []) {
      await t.exec('UPDATE roles SET data_scope = ? WHERE id = ?', scope, roleId);
      await t.exec('DELETE FROM role_scope_org WHERE role_id = ?', roleId);
      for (const o of orgIds) await t.exec('INSERT INTO role_scope_org (role_id, org_id) VALUES (?, ?)', roleId, o);
    }
    const setOrg = (userId: number, orgId: number | null) => t.exec('UPDATE users SET org_id = ? WHERE id = ?', orgId, userId);

    beforeAll(async () => {
      t = await makeTestApp({ runtime });
      admin = await t.login();
    }, D1_START_MS);

    describe('the tree', () => {
      test('add builds the tree; detail and tree show it; closure rows follow', async () => {
        const hq = await add('hq');
        const sales = await add('sales', hq.id);
        const east = await add('east', sales.id);
        expect(await ancestors(east.id)).toEqual([east.id, sales.id, hq.id]);
        const d = await get(`/app/sysOrg/detail?id=${sales.id}`);
        expect(d.data).toMatchObject({ id: sales.id, parentId: hq.id, name: 'sales', code: 'sales', status: 'enabled', version: 1, remark: null });
        const tree = await get('/app/sysOrg/tree');
        const node = tree.data.find((n: any) => n.id === hq.id);
        expect(node.children.map((c: any) => c.id)).toEqual([sales.id]);
        expect(node.children[0].children.map((c: any) => c.id)).toEqual([east.id]);
      });

      test('a code is unique case-insensitively (409), an unknown parent is 400; nothing changes', async () => {
        await add('uniq1');
        const before = await snap();
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'UNIQ1' })).status).toBe(409);
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'orphan', parentId: 999999 })).status).toBe(400);
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'bad code!' })).status).toBe(400);
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'x1', id: 5 })).status).toBe(400);
        expect(await snap()).toBe(before);
      });

      test('a move rewrites the subtree; a move under itself or a descendant is 400 and changes nothing', async () => {
        const a = await add('mv_a');
        const b = await add('mv_b', a.id);
        const c = await add('mv_c', b.id);
        const other = await add('mv_other');
        const before = await snap();
        for (const parentId of [a.id, b.id, c.id]) {
          const r = await post('/app/sysOrg/edit', { id: a.id, version: a.version, parentId });
          expect(`${r.status} ${r.json.msg}`).toMatch(/^400 parentId: /);
        }
        expect(await snap()).toBe(before);
        const moved = await post('/app/sysOrg/edit', { id: b.id, version: b.version, parentId: other.id });
        expect(moved.status).toBe(200);
        expect(moved.data.version).toBe(2);
        expect(await ancestors(c.id)).toEqual([c.id, b.id, other.id]);
        expect(await ancestors(a.id)).toEqual([a.id]);
        // To the root and back.
        const root = await post('/app/sysOrg/edit', { id: b.id, version: 2, parentId: 0 });
        expect(root.status).toBe(200);
        expect(await ancestors(c.id)).toEqual([c.id, b.id]);
      });

      test('a stale version is 409 and changes nothing; a code taken by another org is 409', async () => {
        const o = await add('ver1');
        await add('ver2');
        expect((await post('/app/sysOrg/edit', { id: o.id, version: 1, name: 'renamed' })).status).toBe(200);
        const before = await snap();
        expect((await post('/app/sysOrg/edit', { id: o.id, version: 1, name: 'again' })).status).toBe(409);
        expect((await post('/app/sysOrg/edit', { id: o.id, version: 2, code: 'VER2' })).status).toBe(409);
        expect((await post('/app/sysOrg/edit', { id: 999999, version: 1, name: 'x' })).status).toBe(404);
        expect(await snap()).toBe(before);
      });

      test('two crossing moves cannot build a cycle together', async () => {
        const p = await add('cross_p');
        const q = await add('cross_q');
        // Both requests pass their early checks before either writes.
        const { result: [r1, r2], writes } = await withWriteBarrier(t, 2, () =>
          Promise.all([
            post('/app/sysOrg/edit', { id: p.id, version: 1, parentId: q.id }),
            post('/app/sysOrg/edit', { id: q.id, version: 1, parentId: p.id }),
          ]),
        );
        expect(writes).toBe(2);
        expect([r1.status, r2.status].sort()).toEqual([200, 400]);
        // Still a tree: no org is its own strict ancestor.
        expect(await t.row('SELECT count(*) AS n FROM org_closure WHERE ancestor_id = descendant_id AND depth > 0')).toEqual({ n: 0 });
      });

      test('delete is refused while children or users remain (400), unknown ids are 404; leaves and whole subtrees go', async () => {
        const top = await add('del_top');
        const mid = await add('del_mid', top.id);
        const leaf = await add('del_leaf', mid.id);
        const u = await post('/app/sysUser/add', { loginName: 'del_member', password: 'Valid-Passw0rd-9' });
        await setOrg(u.data.id, leaf.id);
        const before = await snap();
        expect((await post('/app/sysOrg/delete', { ids: [top.id] })).json.msg).toMatch(/has children/);
        expect((await post('/app/sysOrg/delete', { ids: [leaf.id] })).json.msg).toMatch(/still has users/);
        expect((await post('/app/sysOrg/delete', { ids: [leaf.id, 999999] })).status).toBe(404);
        expect(await snap()).toBe(before);
        await setOrg(u.data.id, null);
        expect((await post('/app/sysOrg/delete', { ids: [top.id, mid.id, leaf.id] })).status).toBe(200);
        expect(await t.row('SELECT count(*) AS n FROM org_closure WHERE ancestor_id IN (?, ?, ?) OR descendant_id IN (?, ?, ?)', top.id, mid.id, leaf.id, top.id, mid.id, leaf.id)).toEqual({ n: 0 });
        expect((await get(`/app/sysOrg/detail?id=${top.id}`)).status).toBe(404);
      });
    });

    describe('organisations in the data scope', () => {
      let company: number, branchA: number, teamA: number, branchB: number;
      let mgr: Awaited<ReturnType<typeof userWithCodes>>;
      beforeAll(async () => {
        company = (await add('co')).id;
        branchA = (await add('co_a', company)).id;
        teamA = (await add('co_a_team', branchA)).id;
        branchB = (await add('co_b', company)).id;
        mgr = await userWithCodes(t, admin, ['sys:org:tree', 'sys:org:detail', 'sys:org:add', 'sys:org:edit', 'sys:org:delete']);
        await setScope(mgr.roleId, 'orgAndBelow');
        await setOrg(mgr.userId, branchA);
      });

      test('tree and detail show only the scope (a hidden parent makes a root); others are 404', async () => {
        const tree = await get('/app/sysOrg/tree', mgr.token);
        expect(tree.data.map((n: any) => n.id)).toEqual([branchA]);
        expect(tree.data[0].children.map((n: any) => n.id)).toEqual([teamA]);
        expect((await get(`/app/sysOrg/detail?id=${teamA}`, mgr.token)).status).toBe(200);
        expect((await get(`/app/sysOrg/detail?id=${branchB}`, mgr.token)).status).toBe(404);
        expect((await get(`/app/sysOrg/detail?id=${company}`, mgr.token)).status).toBe(404);
      });

      test('writes stay inside: adding at the root or under an org outside is 403; editing or deleting one outside is 404', async () => {
        const b = (await get(`/app/sysOrg/detail?id=${branchB}`)).data;
        const before = await snap();
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'sc_x1' }, mgr.token)).status).toBe(403);
        expect((await post('/app/sysOrg/add', { name: 'x', code: 'sc_x2', parentId: branchB }, mgr.token)).status).toBe(403);
        expect((await post('/app/sysOrg/edit', { id: branchB, version: b.version, name: 'mine now' }, mgr.token)).status).toBe(404);
        expect((await post('/app/sysOrg/edit', { id: teamA, version: 1, parentId: branchB }, mgr.token)).status).toBe(403);
        expect((await post('/app/sysOrg/edit', { id: teamA, version: 1, parentId: 0 }, mgr.token)).status).toBe(403);
        expect((await post('/app/sysOrg/delete', { ids: [branchB] }, mgr.token)).status).toBe(404);
        expect(await snap()).toBe(before);
      });

      test('inside the scope the holder adds, edits and deletes', async () => {
        const sub = await add('sc_sub', teamA, mgr.token);
        expect(await ancestors(sub.id)).toEqual([sub.id, teamA, branchA, company]);
        expect((await post('/app/sysOrg/edit', { id: sub.id, version: 1, name: 'renamed' }, mgr.token)).status).toBe(200);
        expect((await post('/app/sysOrg/delete', { ids: [sub.id] }, mgr.token)).status).toBe(200);
      });

      test('scope `org` covers the own organisation only; `custom` covers its lists; `self` no organisation', async () => {
        await setScope(mgr.roleId, 'org');
        expect((await get('/app/sysOrg/tree', mgr.token)).data.map((n: any) => n.id)).toEqual([branchA]);
        expect((await get(`/app/sysOrg/detail?id=${teamA}`, mgr.token)).status).toBe(404);
        await setScope(mgr.roleId, 'custom', [branchB]);
        expect((await get('/app/sysOrg/tree', mgr.token)).data.map((n: any) => n.id)).toEqual([branchB]);
        await setScope(mgr.roleId, 'self');
        expect((await get('/app/sysOrg/tree', mgr.token)).data).toEqual([]);
        await setScope(mgr.roleId, 'all');
        expect((await get('/app/sysOrg/tree', mgr.token)).data.map((n: any) => n.id)).toContain(company);
        await setScope(mgr.roleId, 'orgAndBelow');
      });

      test('a scope narrowed between the check and the write still refuses the write (guard inside the batch)', async () => {
        const sub = await add('race_sub', teamA, mgr.token);
        // The scope changes after the early checks, just before the batch runs.
        const before = await snap();
        const narrow = onceBeforeWrite(t, () => setScope(mgr.roleId, 'self'));
        try {
          const r = await post('/app/sysOrg/edit', { id: sub.id, version: 1, name: 'late' }, mgr.token);
          expect(narrow.ran()).toBe(true);
          expect(r.status).toBe(404);
          expect(await snap()).toBe(before);
        } finally {
          narrow.restore();
          await setScope(mgr.roleId, 'orgAndBelow');
        }
      });
    });
  });
}
