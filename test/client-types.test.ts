// The typed client's contract, checked twice: at compile time (`tsc --noEmit` in `npm test` fails
// if a route's request or response type drifts from what is spelled out here) and at run time
// (the same client, pointed at an in-memory app, really logs in and reads the caller).
import { describe, expect, test } from 'bun:test';
import type { InferRequestType, InferResponseType } from 'hono/client';
import type { ExtractSchema } from 'hono/types';
import type { AppType } from '../src/app.ts';
import { createClient, type ApiKey, type Client, type RouterMenu } from '../src/client.ts';
import { ADMIN_PASSWORD, makeTestApp } from './support/app.ts';

// --- type-level assertions -------------------------------------------------------------------
/** Exact type equality (distinguishes optional, readonly and `any`). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
/** Flattens intersections so that Equal compares shapes, not how a type was written. */
type Flat<T> = { [K in keyof T]: T[K] };

// Every route path must stay a literal in the app's type. A path built from a plain `string`
// (e.g. `${base}/page` with base: string) becomes a pattern key like `${string}/page`, which
// silently hides every other module's /page from hc<AppType>.
type Paths = keyof ExtractSchema<AppType>;
type PatternPaths = Paths extends infer K ? (K extends string ? ({} extends Record<K, 1> ? K : never) : never) : never;
export type AllPathsLiteral = Assert<Equal<PatternPaths, never>>;
export type SomePaths = Assert<
  Equal<
    Extract<Paths, '/auth/login' | '/app/sysUser/page' | '/app/sysImage/page' | '/app/sysImage/upload' | '/app/sysImage/preview'>,
    '/auth/login' | '/app/sysUser/page' | '/app/sysImage/page' | '/app/sysImage/upload' | '/app/sysImage/preview'
  >
>;

type Login = Client['auth']['login']['$post'];
type Captcha = Client['auth']['captcha']['$get'];
type Info = Client['app']['sysLoginUser']['getLoginUserInformation']['$get'];

type ErrorEnvelope = { status: number; msg: string; data: null; traceId: string };
type Ok<T> = { status: 200; msg: 'SUCCESS'; data: T; traceId: string };

export type LoginBody = Assert<
  Equal<Flat<InferRequestType<Login>['json']>, { loginName: string; password: string; codeKey?: string | null | undefined; securityCode?: string | null | undefined }>
>;
export type LoginOk = Assert<
  Equal<
    InferResponseType<Login, 200>,
    Ok<
      | { token: string; tokenType: 'Bearer'; expiresIn: number; expiresAt: string }
      // An account with a second factor: a challenge for /auth/login/verify, no token yet.
      | { mfa: true; challenge: string; methods: ('totp' | 'passkey' | 'recovery')[]; token: null }
    >
  >
>;
type Verify = Client['auth']['login']['verify']['$post'];
export type VerifyOk = Assert<
  Equal<
    InferResponseType<Verify, 200>,
    Ok<{ token: string; tokenType: 'Bearer'; expiresIn: number; expiresAt: string; factor: 'totp' | 'passkey' | 'recovery'; recoveryCodesLeft: number | null }>
  >
>;
export type LoginErrors = Assert<Equal<InferResponseType<Login, 400 | 401 | 403 | 429>, ErrorEnvelope>>;

export type CaptchaOk = Assert<
  Equal<InferResponseType<Captcha, 200>, Ok<{ codeKey: string | null; image: string | null; expiresIn: number; enabled: boolean }>>
>;

type PublicUser = {
  id: number;
  loginName: string;
  nickName: string;
  email: string | null;
  phone: string | null;
  avatar: string | null;
  status: 'enabled' | 'disabled';
  remark: string | null;
  lastLoginAt: string | null;
  lastLoginIp: string | null;
  orgId: number | null;
  orgName: string | null;
  postIds: number[];
  mfaEnabled: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
};
type InfoData = InferResponseType<Info, 200>['data'];
export type InfoKeys = Assert<Equal<keyof InfoData, 'user' | 'roles' | 'permissions' | 'menus' | 'org' | 'dataScope'>>;
export type InfoUser = Assert<Equal<InfoData['user'], PublicUser>>;
export type InfoCodes = Assert<Equal<[InfoData['roles'], InfoData['permissions']], [string[], string[]]>>;
type MenuFields = {
  id: number;
  parentId: number;
  title: string;
  type: 'directory' | 'menu';
  path: string | null;
  component: string | null;
  icon: string | null;
  sort: number;
  hidden: boolean;
  name: string;
  keepAlive: boolean;
};
export type InfoMenu = Assert<Equal<Omit<InfoData['menus'][number], 'children'>, MenuFields>>;
export type RouterMenuShape = Assert<Equal<Omit<RouterMenu, 'children'>, MenuFields>>;
export type RouterMenuChildren = Assert<Equal<RouterMenu['children'], RouterMenu[]>>;
export type InfoNeedsToken = Assert<Equal<InferResponseType<Info, 401>, ErrorEnvelope>>;

type UserPage = Client['app']['sysUser']['page']['$post'];
type UserPageBody = InferRequestType<UserPage>['json'];
export type UserPageKeys = Assert<Equal<keyof UserPageBody, 'pageNo' | 'pageSize' | 'params' | 'sortField' | 'sortOrder' | 'searchCount'>>;
export type UserPageNumbers = Assert<Equal<[UserPageBody['pageNo'], UserPageBody['pageSize']], [number | undefined, number | undefined]>>;
export type UserPageParams = Assert<
  Equal<
    Flat<NonNullable<UserPageBody['params']>>,
    {
      loginName?: string | undefined;
      nickName?: string | undefined;
      phone?: string | undefined;
      status?: 'enabled' | 'disabled' | undefined;
      roleId?: number | undefined;
      postId?: number | undefined;
      orgId?: number | undefined;
      createdFrom?: string | undefined;
      createdTo?: string | undefined;
    }
  >
>;
export type UserPageSort = Assert<
  Equal<UserPageBody['sortField'], 'id' | 'loginName' | 'nickName' | 'createdAt' | 'updatedAt' | 'lastLoginAt' | undefined>
>;
export type UserPageOk = Assert<
  Equal<
    InferResponseType<UserPage, 200>,
    Ok<{ records: PublicUser[]; total: number; size: number; current: number; pages: number; searchCount: boolean }>
  >
>;
export type UserPageForbidden = Assert<Equal<InferResponseType<UserPage, 403>, ErrorEnvelope>>;

type ImagePage = Client['app']['sysImage']['page']['$post'];
type FilePage = Client['app']['sysFile']['page']['$post'];
type FileShape = {
  id: number;
  name: string;
  extension: string;
  contentType: string;
  size: number;
  sha256: string;
  url: string | null;
  createdBy: number | null;
  createdAt: string;
};
// sysFile and sysImage come from one route factory, generic over each part of its spec, so each
// kind answers exactly its own record (no file-or-image union to narrow).
export type ImageRecord = Assert<Equal<Flat<InferResponseType<ImagePage, 200>['data']['records'][number]>, Flat<FileShape & { width: number; height: number }>>>;
export type FileRecord = Assert<Equal<InferResponseType<FilePage, 200>['data']['records'][number], FileShape>>;

// API keys (issue 30): the record, the one-time secret, and the request body.
type KeyAdd = Client['app']['sysApiKey']['add']['$post'];
type KeyShape = {
  id: number;
  name: string;
  userId: number;
  loginName: string;
  codes: string[];
  expiresAt: string;
  allowedIps: string[];
  status: 'active' | 'revoked' | 'expired';
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  createdAt: string;
};
export type ApiKeyRecord = Assert<Equal<Flat<ApiKey>, KeyShape>>;
export type ApiKeyCreated = Assert<Equal<Flat<InferResponseType<KeyAdd, 200>['data']>, Flat<KeyShape & { secret: string }>>>;
export type ApiKeyAddBody = Assert<
  Equal<Flat<InferRequestType<KeyAdd>['json']>, { name: string; codes: string[]; expiresAt?: string | undefined; allowedIps?: string[] | undefined }>
>;
export type ApiKeyPageRecord = Assert<Equal<InferResponseType<Client['app']['sysApiKey']['page']['$post'], 200>['data']['records'][number], ApiKey>>;

// --- run time: the typed client against a real app -----------------------------------------
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const t = await makeTestApp();
let token: string | null = null;
const client = createClient('http://api.test', () => token, ((input: RequestInfo | URL, init?: RequestInit) =>
  t.app.request(input instanceof Request ? input : String(input), init)) as typeof fetch);

describe('typed client (hc<AppType>)', () => {
  test('without a token the Bearer header is absent and the envelope says 401', async () => {
    const res = await client.app.sysLoginUser.getLoginUserInformation.$get();
    expect(res.status).toBe(401);
    const body = await res.json();
    expect(body.data).toBeNull();
  });

  test('login, then read the caller with the token the client adds itself', async () => {
    const res = await client.auth.login.$post({ json: { loginName: 'admin', password: ADMIN_PASSWORD } });
    expect(res.status).toBe(200);
    if (!res.ok) throw new Error('login failed');
    const login = await res.json();
    if (login.data.token === null) throw new Error('the admin has no second factor here');
    expect(login.data.tokenType).toBe('Bearer');
    token = login.data.token;

    const info = await client.app.sysLoginUser.getLoginUserInformation.$get();
    if (!info.ok) throw new Error(`info failed: ${info.status}`);
    const data = (await info.json()).data;
    expect(data.user.loginName).toBe('admin');
    expect(data.roles).toEqual(['superAdmin']);
    const menus: RouterMenu[] = data.menus as RouterMenu[];
    expect(menus.length).toBeGreaterThan(0);
    // (Issue 26: `every` on an empty list held; the first directory has children, each titled.)
    expect(menus[0]!.children.length).toBeGreaterThan(0);
    for (const m of menus[0]!.children) expect(m.title).toBeString();

    const page = await client.app.sysUser.page.$post({ json: { pageNo: 1, pageSize: 5 } });
    if (!page.ok) throw new Error(`page failed: ${page.status}`);
    const users = (await page.json()).data;
    expect(users.records.map((u) => u.loginName)).toContain('admin');
    expect(users.current).toBe(1);

    // Uploads are multipart, typed as `form: { file }`: hc builds the FormData.
    const file = new File([Buffer.from(PNG_1X1, 'base64')], 'dot.png', { type: 'image/png' });
    const up = await client.app.sysImage.upload.$post({ form: { file } });
    if (!up.ok) throw new Error(`upload failed: ${up.status} ${(await up.json()).msg}`);
    const image = (await up.json()).data;
    expect(image.url).toStartWith('/app/sysImage/preview?');
    expect(image.width).toBe(1);

    // An API key in place of the token: the same client, the key as its bearer.
    const made = await client.app.sysApiKey.add.$post({ json: { name: 'typed', codes: ['sys:user:page'] } });
    if (!made.ok) throw new Error(`key add failed: ${made.status}`);
    const secret = (await made.json()).data.secret;
    const keyed = createClient('http://api.test', () => secret, ((input: RequestInfo | URL, init?: RequestInit) =>
      t.app.request(input instanceof Request ? input : String(input), init)) as typeof fetch);
    const viaKey = await keyed.app.sysUser.page.$post({ json: {} });
    expect(viaKey.status).toBe(200);
    expect((await keyed.app.sysApiKey.page.$post({ json: {} })).status).toBe(403);

    const out = await client.auth.logout.$post();
    expect(out.status).toBe(200);
    expect((await client.app.sysLoginUser.getLoginUserInformation.$get()).status).toBe(401);
  });
});
