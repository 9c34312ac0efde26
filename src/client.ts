// Typed RPC client for a TypeScript SPA. Runtime-agnostic: it only needs `fetch`, and the app is
// imported as a type, so a bundle that uses this file pulls in hono/client and nothing of the server.
import { hc, type InferResponseType } from 'hono/client';
import type { AppType } from './app.ts';

export type { AppType };

/** Where the token comes from; called before every request, so a logout takes effect at once. */
export type TokenSource = () => string | null | undefined | Promise<string | null | undefined>;

/**
 * `hc<AppType>` with the Bearer header added from `getToken` (when it yields a token).
 * Example: `createClient('http://127.0.0.1:3000', () => localStorage.getItem('token'))`.
 */
export function createClient(baseUrl: string, getToken?: TokenSource, fetchImpl?: typeof fetch) {
  return hc<AppType>(baseUrl, {
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
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
export type { FileRecord, ImageRecord } from './modules/files/files.schemas.ts';
