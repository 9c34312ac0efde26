// An SPA session with a client generated from /openapi.json (openapi-typescript + openapi-fetch),
// with no casts: login → user info → a page of users → add a user → upload a file → logout.
// test/generated-client.test.ts generates ./schema.d.ts, type-checks this file with a browser-only
// tsconfig (no Bun or Node types) and runs it against a live server.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type User = components['schemas']['User'];

export async function session(baseUrl: string, loginName: string, password: string) {
  let token: string | null = null;
  const api = createClient<paths>({ baseUrl });
  const auth: Middleware = {
    onRequest({ request }) {
      if (token) request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
  api.use(auth);

  const login = await api.POST('/auth/login', { body: { loginName, password } });
  if (!login.data) throw new Error(`login refused: ${login.error?.msg}`);
  const answer = login.data.data;
  // An account with a second factor gets a challenge instead (POST /auth/login/verify with a code).
  if ('mfa' in answer) throw new Error('this account has a second factor: verify the challenge at /auth/login/verify');
  token = answer.token;

  const me = await api.GET('/app/sysLoginUser/getLoginUserInformation');
  if (!me.data) throw new Error(me.error?.msg);
  const { user, permissions, menus } = me.data.data;
  const firstMenuTitle: string | undefined = menus[0]?.title;

  // pageNo, pageSize, sortOrder and searchCount have defaults: they may be left out.
  const page = await api.POST('/app/sysUser/page', { body: { pageSize: 20, params: { status: 'enabled' } } });
  if (!page.data) throw new Error(page.error?.msg);
  const users: User[] = page.data.data.records;

  const added = await api.POST('/app/sysUser/add', { body: { loginName: `dora${Date.now() % 100000}`, password: 'Quiet-Lantern-31', nickName: 'Dora' } });
  if (!added.data) throw new Error(added.error?.msg);
  const newId: number = added.data.data.id;

  const detail = await api.GET('/app/sysUser/detail', { params: { query: { id: newId } } });
  if (!detail.data) throw new Error(detail.error?.msg);

  const upload = await api.POST('/app/sysFile/upload', {
    body: { file: new Blob(['quarterly figures'], { type: 'text/plain' }) },
    bodySerializer(body) {
      const form = new FormData();
      form.append('file', body.file, 'figures.txt');
      return form;
    },
  });
  if (!upload.data) throw new Error(upload.error?.msg);
  const fileUrl: string | null = upload.data.data.url;

  const out = await api.POST('/auth/logout');
  if (!out.data) throw new Error(out.error?.msg);
  token = null;
  return { user: user.loginName, permissions, firstMenuTitle, users: users.length, newId, fileUrl, status: detail.data.status };
}
