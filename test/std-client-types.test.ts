// The typed client (hc<AppType>) for the standard modules of issue 27, checked at compile time
// (`tsc --noEmit` in `npm test`) and at run time against an in-memory app.
import { describe, expect, test } from 'bun:test';
import type { InferRequestType, InferResponseType } from 'hono/client';
import { createClient, type Client, type ConfigRecord, type DictItem, type Notice, type Post } from '../src/client.ts';
import { ADMIN_PASSWORD, makeTestApp } from './support/app.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type Flat<T> = { [K in keyof T]: T[K] };
type Ok<T> = { status: 200; msg: 'SUCCESS'; data: T; traceId: string };

type Items = Client['app']['sysDict']['items']['$get'];
type All = Client['app']['sysDict']['all']['$get'];
type Latest = Client['app']['sysNotice']['latest']['$get'];
type PostList = Client['app']['sysPost']['list']['$get'];
type Value = Client['app']['sysConfig']['value']['$get'];
type ConfigEdit = Client['app']['sysConfig']['edit']['$post'];
type UserAdd = Client['app']['sysUser']['add']['$post'];

export type ItemShape = Assert<
  Equal<
    Flat<DictItem>,
    {
      id: number;
      typeCode: string;
      label: string;
      value: string;
      sort: number;
      tagType: 'default' | 'primary' | 'success' | 'info' | 'warning' | 'danger';
      cssClass: string | null;
      isDefault: boolean;
      remark: string | null;
    }
  >
>;
export type ItemsOk = Assert<Equal<InferResponseType<Items, 200>, Ok<DictItem[]>>>;
export type ItemsQuery = Assert<Equal<InferRequestType<Items>['query'], { code: string }>>;
export type AllOk = Assert<Equal<InferResponseType<All, 200>['data'], Record<string, DictItem[]>>>;
type LatestData = InferResponseType<Latest, 200>['data'];
export type LatestKeys = Assert<Equal<keyof LatestData, 'unread' | 'records'>>;
export type LatestRecord = Assert<Equal<LatestData['records'][number], Flat<Notice & { read: boolean }>>>;
export type NoticeShape = Assert<Equal<Notice['status'], 'draft' | 'published' | 'closed'>>;
export type PostListOk = Assert<Equal<InferResponseType<PostList, 200>, Ok<Post[]>>>;
export type ValueOk = Assert<Equal<InferResponseType<Value, 200>, Ok<string>>>;
export type ConfigOk = Assert<Equal<InferResponseType<ConfigEdit, 200>, Ok<ConfigRecord>>>;
export type UserAddPassword = Assert<Equal<InferRequestType<UserAdd>['json']['password'], string | undefined>>;
export type UserAddPosts = Assert<Equal<InferRequestType<UserAdd>['json']['postIds'], number[] | undefined>>;

const t = await makeTestApp();
let token: string | null = null;
const client = createClient('http://api.test', () => token, ((input: RequestInfo | URL, init?: RequestInit) =>
  t.app.request(input instanceof Request ? input : String(input), init)) as typeof fetch);

describe('typed client: standard modules', () => {
  test('dictionaries with their ETag, notices, posts and a parameter through hc', async () => {
    const login = await client.auth.login.$post({ json: { loginName: 'admin', password: ADMIN_PASSWORD } });
    if (!login.ok) throw new Error('login failed');
    token = (await login.json()).data.token;
    const items = await client.app.sysDict.items.$get({ query: { code: 'sys_normal_disable' } });
    if (items.status !== 200) throw new Error(`items: ${items.status}`);
    expect((await items.json()).data.map((i) => i.value)).toEqual(['enabled', 'disabled']);
    const etag = items.headers.get('etag')!;
    const again = await client.app.sysDict.items.$get({ query: { code: 'sys_normal_disable' } }, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    const post = await client.app.sysPost.add.$post({ json: { code: 'typed', name: 'Typed' } });
    if (!post.ok) throw new Error(`post: ${post.status}`);
    const posts = await client.app.sysPost.list.$get();
    if (!posts.ok) throw new Error(`list: ${posts.status}`);
    expect((await posts.json()).data.map((p) => p.code)).toEqual(['typed']);
    const latest = await client.app.sysNotice.latest.$get({ query: { limit: '3' } });
    if (!latest.ok) throw new Error(`latest: ${latest.status}`);
    expect((await latest.json()).data).toEqual({ unread: 0, records: [] });
    const value = await client.app.sysConfig.value.$get({ query: { key: 'sys.account.registerUser' } });
    if (!value.ok) throw new Error(`value: ${value.status}`);
    expect((await value.json()).data).toBe('');
  });
});
