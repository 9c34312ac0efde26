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

type InfoData = InferResponseType<Client['app']['sysLoginUser']['getLoginUserInformation']['$get'], 200>['data'];
type MenuNode = InfoData['menus'][number];

/**
 * One node of the SPA menu tree. Hono's client types stop at recursive types (the nested
 * `children` come out as plain JSON values), so the recursion is restored here.
 */
export type RouterMenu = Omit<MenuNode, 'children'> & { children: RouterMenu[] };
