import { AUTH_HOLDS_SQL, AUTH_SESSION_SQL } from '../src/access/auth-statement.ts';
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createClient } from '../src/client.ts';
import { BOOKMARK_HEADER, validBookmark } from '../src/http/bookmark.ts';
import { ADMIN_PASSWORD, D1_START_MS, makeTestApp, type D1TestApp, type TestApp } from './support/app.ts';
import { LaggingD1 } from './support/lagging-d1.ts';
import { userWithCodes } from './support/rbac.ts';
import { freshD1 } from './support/workerd.ts';

// D1 read replication (docs/deploy-cloudflare.md, "Read replicas") against a replica that lags for as long as a
// test wants (support/lagging-d1.ts): the auth statement and writes go to the primary, the reads
// after a passed auth check to a replica at least as new as the client's X-D1-Bookmark.

/** The caller's auth statements (src/access/auth-statement.ts), told apart from a request's data reads. */
const AUTH = { test: (sql: string) => sql === AUTH_SESSION_SQL || sql === AUTH_HOLDS_SQL };
let t: D1TestApp;
let lag: LaggingD1;
let admin: string;

beforeAll(async () => {
  t = await makeTestApp({
    runtime: 'd1',
    env: { D1_READ_REPLICATION: 'true', CORS_ORIGINS: 'https://spa.example' },
    wrapD1: async (primary) => (lag = new LaggingD1(primary, await freshD1())),
  });
  admin = await t.login();
  await lag.catchUp();
}, D1_START_MS);

const detail = (id: number, token: string, bookmark?: string) =>
  t.call('GET', `/app/sysUser/detail?id=${id}`, { token, headers: bookmark === undefined ? {} : { [BOOKMARK_HEADER]: bookmark } });

/** A user the reader can see, with a nick name changed on the primary only (the replica lags). */
async function staleUser(reader: string) {
  const target = await userWithCodes(t, []);
  await lag.catchUp();
  const before = await detail(target.userId, reader);
  expect(before.status).toBe(200);
  const edited = await t.call('POST', '/app/sysUser/edit', {
    token: admin,
    body: { id: target.userId, version: before.data.version, nickName: 'Renamed on the primary' },
  });
  expect(edited.status).toBe(200);
  expect(lag.replicaSeq).toBeLessThan(lag.seq);
  return { target, edited, oldNick: before.data.nickName as string };
}

describe('read replication on D1 (lagging replica)', () => {
  test('a read route: the auth statement on the primary, the data on the replica; the answer carries a bookmark', async () => {
    const reader = await userWithCodes(t, ['sys:user:detail']);
    await lag.catchUp();
    const from = lag.served.length;
    const r = await detail(reader.userId, reader.token);
    expect(r.status).toBe(200);
    const ran = lag.served.slice(from);
    expect(ran.filter((s) => AUTH.test(s.sql)).map((s) => s.on)).toEqual(['primary', 'primary']); // the session, then who holds what
    const data = ran.filter((s) => !AUTH.test(s.sql));
    expect(data.length).toBeGreaterThan(0);
    expect(data.every((s) => s.on === 'replica')).toBe(true);
    expect(validBookmark(r.res.headers.get(BOOKMARK_HEADER))).toBeDefined();
  });

  test('the replica really lags: without a bookmark a read sees the old value', async () => {
    const reader = await userWithCodes(t, ['sys:user:detail']);
    const { target, oldNick } = await staleUser(reader.token);
    const stale = await detail(target.userId, reader.token);
    expect(stale.status).toBe(200);
    expect(stale.data.nickName).toBe(oldNick);
  });

  test('(b) a user reads their own write: the bookmark of the write brings the next read up to it', async () => {
    const { target, edited } = await staleUser(admin);
    const bookmark = edited.res.headers.get(BOOKMARK_HEADER);
    expect(validBookmark(bookmark)).toBeDefined();
    // It covers the edit; the op-log row, written after the response (waitUntil), is one write later.
    expect(LaggingD1.seqOf(bookmark!)).toBe(lag.seq - 1);
    const own = await detail(target.userId, admin, bookmark!);
    expect(own.status).toBe(200);
    expect(own.data.nickName).toBe('Renamed on the primary');
    // The answer's bookmark is never older than the one sent.
    expect(own.res.headers.get(BOOKMARK_HEADER)! >= bookmark!).toBe(true);
    // Once the replica has caught up, the same bookmark is served by the replica.
    await lag.catchUp();
    const from = lag.served.length;
    expect((await detail(target.userId, admin, bookmark!)).data.nickName).toBe('Renamed on the primary');
    // (Issue 26: `every` on an empty list held; the read must have been served, and by the replica.)
    const reads = lag.served.slice(from).filter((s) => !AUTH.test(s.sql));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.map((s) => s.on)).toEqual(reads.map(() => 'replica'));
  });

  test('(a) a revoked token never works on the next request, though the replica still has the session live', async () => {
    const victim = await userWithCodes(t, ['sys:user:detail']);
    await lag.catchUp();
    const first = await detail(victim.userId, victim.token);
    expect(first.status).toBe(200);
    const bookmark = first.res.headers.get(BOOKMARK_HEADER)!;
    const jti = JSON.parse(atob(victim.token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).jti as string;
    const kicked = await t.call('POST', '/app/sysOnlineUser/forceLogout', { token: admin, body: { sessionIds: [jti] } });
    expect(kicked.status).toBe(200);
    const onReplica = await lag.replica.prepare('SELECT revoked_at FROM sessions WHERE id = ?').bind(jti).all<{ revoked_at: string | null }>();
    expect(onReplica.results[0]!.revoked_at).toBeNull();
    // With the victim's own (old) bookmark, and without any.
    expect((await detail(victim.userId, victim.token, bookmark)).status).toBe(401);
    expect((await detail(victim.userId, victim.token)).status).toBe(401);
    // Logout of one's own session too.
    const other = await userWithCodes(t, ['sys:user:detail']);
    await lag.catchUp();
    expect((await t.call('POST', '/auth/logout', { token: other.token })).status).toBe(200);
    expect((await detail(other.userId, other.token)).status).toBe(401);
  });

  test('(a) a removed permission never works on the next request, though the replica still grants it', async () => {
    const user = await userWithCodes(t, ['sys:user:detail']);
    await lag.catchUp();
    expect((await detail(user.userId, user.token)).status).toBe(200);
    const revoked = await t.call('POST', '/app/sysRole/grantMenu', { token: admin, body: { roleId: user.roleId, menuIds: [] } });
    expect(revoked.status).toBe(200);
    const still = await lag.replica.prepare('SELECT count(*) AS n FROM role_menu WHERE role_id = ?').bind(user.roleId).all<{ n: number }>();
    expect(still.results[0]!.n).toBeGreaterThan(0);
    expect((await detail(user.userId, user.token)).status).toBe(403);
    // A disabled user: 401 at once.
    const other = await userWithCodes(t, ['sys:user:detail']);
    await lag.catchUp();
    const off = await t.call('POST', '/app/sysUser/changeStatus', { token: admin, body: { id: other.userId, status: 'disabled' } });
    expect(off.status).toBe(200);
    expect((await detail(other.userId, other.token)).status).toBe(401);
  });

  test('writes, login and logout run on the primary only', async () => {
    const from = lag.served.length;
    const token = await t.login();
    await t.call('POST', '/auth/logout', { token });
    const u = await userWithCodes(t, []);
    const v = await t.row<{ version: number }>('SELECT version FROM users WHERE id = ?', u.userId);
    expect((await t.call('POST', '/app/sysUser/edit', { token: admin, body: { id: u.userId, version: v!.version, nickName: 'x' } })).status).toBe(200);
    expect(lag.served.slice(from).filter((s) => s.on === 'replica')).toEqual([]);
  });

  test('(c) a malformed bookmark is ignored, never an error', async () => {
    const reader = await userWithCodes(t, ['sys:user:detail']);
    const { target, oldNick } = await staleUser(reader.token);
    for (const bad of ['garbage', 'first-primary', 'first-unconstrained', `${'0'.repeat(8)}-zz`, '../../etc/passwd', 'a'.repeat(5000), '0000000g-00000000']) {
      const r = await detail(target.userId, reader.token, bad);
      expect(r.status).toBe(200);
      // Read as without a bookmark: from the lagging replica.
      expect(r.data.nickName).toBe(oldNick);
      const back = r.res.headers.get(BOOKMARK_HEADER);
      expect(back).not.toBe(bad);
      expect(validBookmark(back)).toBeDefined();
    }
  });

  test('the typed client carries the bookmark: it reads its own write from a lagging replica', async () => {
    const sent: (string | null)[] = [];
    let token: string | null = null;
    const api = createClient('http://api.test', () => token, ((input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(new Headers(init?.headers).get(BOOKMARK_HEADER));
      return t.app.request(input instanceof Request ? input : String(input), init);
    }) as typeof fetch);
    const target = await userWithCodes(t, []);
    await lag.catchUp();
    const login = await api.auth.login.$post({ json: { loginName: 'admin', password: ADMIN_PASSWORD } });
    if (!login.ok) throw new Error('login failed');
    token = (await login.json()).data.token;
    expect(sent).toEqual([null]);
    const before = await api.app.sysUser.detail.$get({ query: { id: String(target.userId) } });
    if (!before.ok) throw new Error('detail failed');
    const version = (await before.json()).data.version;
    expect(validBookmark(sent[1])).toBeDefined();
    const edit = await api.app.sysUser.edit.$post({ json: { id: target.userId, version, nickName: 'Written through the client' } });
    expect(edit.status).toBe(200);
    expect(lag.replicaSeq).toBeLessThan(lag.seq);
    const after = await api.app.sysUser.detail.$get({ query: { id: String(target.userId) } });
    if (!after.ok) throw new Error('detail failed');
    expect((await after.json()).data.nickName).toBe('Written through the client');
    expect(sent.at(-1)).toBe(edit.headers.get(BOOKMARK_HEADER));
  });

  test('CORS: browsers may send the bookmark and read it back', async () => {
    const pre = await t.app.request('/app/sysUser/detail?id=1', {
      method: 'OPTIONS',
      headers: { Origin: 'https://spa.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization,x-d1-bookmark' },
    });
    expect(pre.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-d1-bookmark');
    const r = await t.app.request('/app/sysUser/detail?id=1', { headers: { Origin: 'https://spa.example', authorization: `Bearer ${admin}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-d1-bookmark');
    expect(validBookmark(r.headers.get(BOOKMARK_HEADER))).toBeDefined();
  });
});

describe('without read replication', () => {
  let bun: TestApp;
  let off: D1TestApp;
  let offLag: LaggingD1;
  beforeAll(async () => {
    bun = await makeTestApp();
    off = await makeTestApp({ runtime: 'd1', wrapD1: async (primary) => (offLag = new LaggingD1(primary, await freshD1())) });
  }, D1_START_MS);
  afterAll(() => bun.sqlite.close());

  test('Bun: no bookmark header, and one sent is ignored', async () => {
    const token = await bun.login();
    const r = await bun.call('GET', '/app/sysUser/detail?id=1', { token, headers: { [BOOKMARK_HEADER]: LaggingD1.bookmarkOf(5) } });
    expect(r.status).toBe(200);
    expect(r.res.headers.has(BOOKMARK_HEADER)).toBe(false);
  });

  test('D1 with D1_READ_REPLICATION off (the default): everything on the binding, i.e. the primary; no header', async () => {
    const token = await off.login();
    const r = await off.call('GET', '/app/sysUser/detail?id=1', { token, headers: { [BOOKMARK_HEADER]: LaggingD1.bookmarkOf(5) } });
    expect(r.status).toBe(200);
    expect(r.res.headers.has(BOOKMARK_HEADER)).toBe(false);
    expect(offLag.on('replica')).toEqual([]);
  });
});

describe('validBookmark', () => {
  test('accepts D1-shaped bookmarks, refuses the rest', () => {
    expect(validBookmark('00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683')).toBe('00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683');
    expect(validBookmark(' 00000001-00000002 ')).toBe('00000001-00000002');
    for (const bad of [undefined, null, '', 'first-primary', 'first-unconstrained', '00000001', 'x0000001-00000002', '00000001-0000000', `00000001-${'0'.repeat(600)}`, '00000001-00000002\r\nSet-Cookie: a=b']) {
      expect(validBookmark(bad)).toBeUndefined();
    }
  });
});
