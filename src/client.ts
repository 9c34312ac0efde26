// Typed RPC client for a TypeScript SPA. Runtime-agnostic: it only needs `fetch`, and the app is
// imported as a type, so a bundle that uses this file pulls in hono/client and nothing of the server.
import { hc, type InferResponseType } from 'hono/client';
import type { AppType } from './app.ts';

export type { AppType };

/** Where the token comes from; called before every request, so a logout takes effect at once. */
export type TokenSource = () => string | null | undefined | Promise<string | null | undefined>;

/** The header a D1 read-replication bookmark travels in (docs/deploy-cloudflare.md, "Read replicas"). */
export const BOOKMARK_HEADER = 'X-D1-Bookmark';

/** What a fetch function must accept (Bun's `typeof fetch` also has `preconnect`). */
export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/**
 * A fetch that carries the server's read-replication bookmark: it remembers the newest
 * `X-D1-Bookmark` any answer carried (bookmarks sort oldest first) and sends it with every later
 * request, so a read after a write is served by a replica that already has the write. Without
 * replication (Bun, or D1_READ_REPLICATION off) no answer carries one and nothing is sent.
 */
export function bookmarkFetch(fetchImpl: FetchLike = (input, init) => fetch(input, init)) {
  let latest: string | undefined;
  const wrapped = (async (input: RequestInfo | URL, init?: RequestInit) => {
    let next = init;
    if (latest) {
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      headers.set(BOOKMARK_HEADER, latest);
      next = { ...init, headers };
    }
    const res = await fetchImpl(input, next);
    const got = res.headers.get(BOOKMARK_HEADER);
    if (got && (!latest || got > latest)) latest = got;
    return res;
  }) as typeof fetch & { bookmark(): string | undefined };
  wrapped.bookmark = () => latest;
  return wrapped;
}

/**
 * `hc<AppType>` with the Bearer header added from `getToken` (when it yields a token), and the
 * read-replication bookmark carried from answer to request (bookmarkFetch).
 * Example: `createClient('http://127.0.0.1:3000', () => localStorage.getItem('token'))`.
 */
export function createClient(baseUrl: string, getToken?: TokenSource, fetchImpl?: typeof fetch) {
  return hc<AppType>(baseUrl, {
    fetch: bookmarkFetch(fetchImpl),
    headers: async (): Promise<Record<string, string>> => {
      const token = await getToken?.();
      return token ? { Authorization: `Bearer ${token}` } : {};
    },
  });
}

export type Client = ReturnType<typeof createClient>;

type InfoBody = InferResponseType<Client['app']['sysLoginUser']['getLoginUserInformation']['$get'], 200>;
type InfoMenu = InfoBody['data']['menus'][number];

/**
 * One node of the SPA menu tree, recursive: `name` (stable route name), `path`, `component`,
 * `title`, `icon`, `sort`, `hidden`, `keepAlive`, `children`. Hono's client types stop at recursive
 * types (nested `children` come out as plain JSON values), so the recursion is restored here.
 */
export type MenuNode = Omit<InfoMenu, 'children'> & { children: MenuNode[] };
/** @deprecated the old name of {@link MenuNode}. */
export type RouterMenu = MenuNode;

/** `getLoginUserInformation`'s data with the menu tree typed to the end. */
export type LoginUserInformation = Omit<InfoBody['data'], 'menus'> & { menus: MenuNode[] };

/**
 * The data of a successful getLoginUserInformation answer, menus typed as {@link MenuNode}.
 * Example: `const info = loginUserInformation(await res.json())` after checking `res.ok`.
 */
export function loginUserInformation(body: InfoBody): LoginUserInformation {
  return body.data as LoginUserInformation; // the same JSON; only the static type is deeper
}

/** A file record (sysFile) and an image record (sysImage: the same plus width and height). */
export type { FileRecord, ImageRecord } from './modules/files/index.ts';

/** Records of the standard modules: a dictionary item (sysDict), a notice, a post, a system parameter. */
export type { DictItem } from './modules/dict/index.ts';
export type { Notice } from './modules/notices/index.ts';
export type { Post } from './modules/posts/index.ts';
export type { ConfigRecord } from './modules/config/index.ts';
/** An API key's record (sysApiKey/page; add answers it plus the one-time `secret`): docs/api-keys.md. */
export type { ApiKey } from './modules/api-keys/index.ts';
