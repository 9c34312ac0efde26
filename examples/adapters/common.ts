// What every adapter starts from: our login result, user information and menu tree, typed by
// src/client.ts (the same types hc<AppType> gives an SPA).
import type { LoginUserInformation, MenuNode } from '../../src/client.ts';

export type { LoginUserInformation, MenuNode };

/** The data of POST /auth/login. */
export interface LoginData {
  token: string;
  tokenType: 'Bearer';
  expiresIn: number;
  expiresAt: string;
}

/** Our envelope around any `data`. */
export interface Envelope<T> {
  status: number;
  msg: string;
  data: T;
  traceId: string;
}

/** The first visible menu (not a directory) in tree order: a sensible home page. */
export function firstPage(nodes: MenuNode[]): MenuNode | undefined {
  for (const n of nodes) {
    if (n.hidden) continue;
    if (n.type === 'menu' && n.path) return n;
    const inner = firstPage(n.children);
    if (inner) return inner;
  }
  return undefined;
}

/** `/user/list` under `/user` → `list`; paths outside their parent stay absolute. */
export function relativePath(path: string, parentPath: string | null): string {
  if (parentPath && path.startsWith(`${parentPath.replace(/\/$/, '')}/`)) return path.slice(parentPath.replace(/\/$/, '').length + 1);
  return path;
}
