// An SPA session with the typed Hono client (src/client.ts), no casts: login → user info (menu
// tree typed to the end) → a page of users → a user by numeric id → upload an image and a file, read
// them back (an image record has width and height, a file record has not: no narrowing) → logout.
// test/hc-browser.test.ts type-checks this file with ./tsconfig.json (DOM types only, no Bun or
// Node types, as in a Vite project) and runs it against a live server.
import { createClient, loginUserInformation, type FileRecord, type ImageRecord, type MenuNode } from '../../src/client.ts';

/** Route names of the whole tree, depth first: what an SPA registers with its router. */
export function routeNames(nodes: MenuNode[]): string[] {
  return nodes.flatMap((n) => [n.name, ...routeNames(n.children)]);
}

export async function session(baseUrl: string, loginName: string, password: string, image: Blob, file: Blob) {
  let token: string | null = null;
  const api = createClient(baseUrl, () => token);

  const res = await api.auth.login.$post({ json: { loginName, password } });
  if (!res.ok) throw new Error((await res.json()).msg);
  token = (await res.json()).data.token;

  const me = await api.app.sysLoginUser.getLoginUserInformation.$get();
  if (!me.ok) throw new Error((await me.json()).msg);
  const info = loginUserInformation(await me.json());
  const names = routeNames(info.menus);
  const firstChildPath: string | null | undefined = info.menus[0]?.children[0]?.path;

  const page = await api.app.sysUser.page.$post({ json: { pageSize: 10 } });
  if (!page.ok) throw new Error((await page.json()).msg);
  const firstId: number | undefined = (await page.json()).data.records[0]?.id;

  const detail = await api.app.sysUser.detail.$get({ query: { id: firstId ?? 1 } });
  if (!detail.ok) throw new Error((await detail.json()).msg);
  const nick: string = (await detail.json()).data.nickName;

  const up = await api.app.sysImage.upload.$post({ form: { file: image } });
  if (!up.ok) throw new Error((await up.json()).msg);
  const uploaded: ImageRecord = (await up.json()).data;
  const preview: Pick<ImageRecord, 'url'> = { url: uploaded.url };

  // Each kind answers its own record type: width and height straight off an image, no `'width' in r`.
  const shown = await api.app.sysImage.detail.$get({ query: { id: uploaded.id } });
  if (!shown.ok) throw new Error((await shown.json()).msg);
  const img = (await shown.json()).data;
  const imageSize = `${img.width}x${img.height}`;
  const images = await api.app.sysImage.page.$post({ json: { pageSize: 10 } });
  if (!images.ok) throw new Error((await images.json()).msg);
  const widths: number[] = (await images.json()).data.records.map((r) => r.width);

  const sent = await api.app.sysFile.upload.$post({ form: { file } });
  if (!sent.ok) throw new Error((await sent.json()).msg);
  const got = await api.app.sysFile.detail.$get({ query: { id: (await sent.json()).data.id } });
  if (!got.ok) throw new Error((await got.json()).msg);
  const doc: FileRecord = (await got.json()).data;

  const out = await api.auth.logout.$post();
  token = null;
  return { names, firstChildPath, nick, preview, imageSize, widths, fileName: doc.name, loggedOut: out.ok };
}
