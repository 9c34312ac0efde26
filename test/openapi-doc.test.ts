// The rules the OpenAPI document derives for every operation (src/http/openapi.ts), checked on
// whatever routes exist, so routes added later are held to them too.
import { describe, expect, test } from 'bun:test';
import { makeTestApp } from './support/app.ts';

const t = await makeTestApp({ env: { PAGE_SIZE_MAX: '50' } });
const doc = (await (await t.app.request('http://127.0.0.1:3000/openapi.json')).json()) as any;
const ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ path, method, op })),
);

describe('OpenAPI document', () => {
  test('every operation has a stable operationId derived from its path (sysUser_page, auth_login)', () => {
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, op } of ops) expect(op.operationId).toBe(path.replace(/^\/app\//, '').replace(/^\//, '').replaceAll('/', '_'));
    expect(ids).toContain('sysUser_page');
    expect(ids).toContain('auth_login');
  });

  test('top-level tags list every tag used, each with a description; servers is relative, or PUBLIC_URL, never the Host', async () => {
    const used = new Set(ops.flatMap((o) => o.op.tags ?? []));
    expect(new Set(doc.tags.map((x: any) => x.name))).toEqual(used);
    for (const tag of doc.tags) expect(tag.description.length).toBeGreaterThan(10);
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const named = await makeTestApp({ env: { PUBLIC_URL: 'https://admin.example.com/api/' } });
    const served = (await (await named.app.request('http://evil.example/openapi.json', { headers: { host: 'evil.example' } })).json()) as any;
    expect(served.servers).toEqual([{ url: 'https://admin.example.com/api', description: expect.any(String) }]);
  });

  test('public operations say security: [] and protected ones name bearerAuth', () => {
    const publicOps = ops.filter((o) => o.op.security.length === 0).map((o) => o.op.operationId);
    expect(publicOps.sort()).toEqual(['auth_captcha', 'auth_login', 'auth_login_passkeyOptions', 'auth_login_verify', 'health', ...publicOps.filter((id) => id.startsWith('health_'))].sort());
    for (const { path, op } of ops) if (path.startsWith('/app/')) expect(op.security).toContainEqual({ bearerAuth: [] });
  });

  test('500 everywhere, 503 wherever storage is touched, 413 on every body, 507 on every write (not on pages or exports), X-Trace-Id on every answer', () => {
    expect(ops.find((o) => o.op.operationId === 'auth_captcha')!.op.responses['507']).toBeDefined(); // a GET that stores its challenge
    for (const { path, method, op } of ops) {
      expect(op.responses['500']).toBeDefined();
      if (method === 'post') expect(op.responses['413']).toBeDefined();
      if (method === 'post') expect({ path, writes: op.responses['507'] !== undefined }).toEqual({ path, writes: !path.endsWith('/page') && !path.endsWith('/export') });
      if (op.operationId !== 'health') expect(op.responses['503'].headers['Retry-After']).toBeDefined();
      for (const res of Object.values(op.responses) as any[]) expect(res.headers['X-Trace-Id']).toEqual({ $ref: '#/components/headers/X-Trace-Id' });
      if (op.responses['429']) expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    }
  });

  test('downloads declare their real media types and headers', () => {
    const download = doc.paths['/app/sysFile/download'].get.responses;
    expect(Object.keys(download['200'].content)).toContain('application/pdf');
    expect(Object.keys(download['200'].content)).toContain('application/octet-stream');
    expect(Object.keys(download['206'].headers).sort()).toEqual(['Accept-Ranges', 'Content-Disposition', 'Content-Range', 'ETag', 'X-Trace-Id']);
    expect(Object.keys(download['304'].headers).sort()).toEqual(['Accept-Ranges', 'ETag', 'X-Trace-Id']);
    const exported = doc.paths['/app/sysUser/export'].post.responses;
    expect(Object.keys(exported['200'].content).sort()).toEqual(['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/csv']);
    expect(Object.keys(exported['200'].headers)).toContain('Content-Disposition');
    const preview = doc.paths['/app/sysImage/preview'].get.responses;
    expect(Object.keys(preview['200'].content).sort()).toEqual(['image/gif', 'image/jpeg', 'image/png', 'image/webp']);
  });

  test('ids are integers with integer examples, timestamps are date-time, pageSize stops at PAGE_SIZE_MAX', () => {
    const id = doc.paths['/app/sysUser/detail'].get.parameters.find((p: any) => p.name === 'id');
    expect(id.schema).toMatchObject({ type: 'integer', example: 42 });
    expect(doc.components.schemas.User.properties.createdAt.format).toBe('date-time');
    expect(doc.components.schemas.UserPageRequest.properties.pageSize.maximum).toBe(50);
  });

  test('every operation has a request example (when it takes JSON) and an example for every JSON answer', () => {
    for (const { op } of ops) {
      const body = op.requestBody?.content?.['application/json'];
      if (body) expect(body.example).toBeDefined();
      for (const res of Object.values(op.responses) as any[]) {
        const json = res.content?.['application/json'];
        if (json) expect(json.example).toBeDefined();
      }
    }
  });

  test('examples describe their own kind: an image is a PNG with a preview link, an org has its own code, a captcha expires in minutes', () => {
    const data = (id: string) => ops.find((o) => o.op.operationId === id)!.op.responses['200'].content['application/json'].example.data;
    expect(data('sysImage_detail')).toMatchObject({ name: 'team-photo.png', contentType: 'image/png', url: expect.stringMatching(/^\/app\/sysImage\/preview\?/) });
    expect(data('sysFile_detail')).toMatchObject({ contentType: 'application/pdf', url: expect.stringMatching(/^\/app\/sysFile\/download\?/) });
    expect(data('sysOrg_detail').code).not.toBe(data('sysRole_detail').code);
    expect(data('sysOpLog_detail').path).toStartWith('/app/');
    expect(data('auth_captcha')).toMatchObject({ image: expect.stringMatching(/^data:image\/png;base64,/), expiresIn: 120 });
  });
});
