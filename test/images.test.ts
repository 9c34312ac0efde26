import { beforeAll, describe, expect, test } from 'bun:test';
import { makeTestApp, type TestApp } from './support/app.ts';
import { filesUnder, get, sweepAfterGrace, upload } from './support/files.ts';
import { userWithCodes } from './support/rbac.ts';
import { answerOf, answerOfUpload, expectGuarded, type GuardedOp } from './support/scenario.ts';
import { bytes, gif89, jpeg, png, pngChunk, PNG_SIG, be32, vp8, vp8l, vp8x } from './support/images.ts';

const enc = new TextEncoder();
let t: TestApp;
let admin: string;

beforeAll(async () => {
  t = await makeTestApp();
  admin = await t.login();
});

const nothingStored = (app: TestApp, files = 0) => {
  expect(app.count('files')).toBe(files);
  expect(filesUnder(app.filesDir).filter((f) => f.startsWith('tmp/'))).toEqual([]);
};

/** A PNG with some pixel data between IHDR and IEND, so it is more than a header. */
function pngWithData(w: number, h: number, dataBytes = 2000): Uint8Array {
  const ihdr = [...be32(w), ...be32(h), 8, 6, 0, 0, 0];
  const idat = Array.from({ length: dataBytes }, (_, i) => (i * 31) & 0xff);
  return bytes(PNG_SIG, pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', []));
}

describe('accepted formats: type by magic bytes, size from the header', () => {
  const cases: [string, Uint8Array, string, number, number][] = [
    ['PNG', pngWithData(640, 480), 'image/png', 640, 480],
    ['GIF', gif89(32, 16), 'image/gif', 32, 16],
    ['JPEG', jpeg(1920, 1080), 'image/jpeg', 1920, 1080],
    ['JPEG progressive', jpeg(100, 200, 0xc2), 'image/jpeg', 100, 200],
    ['WebP lossy', vp8(300, 150), 'image/webp', 300, 150],
    ['WebP lossless', vp8l(7, 9), 'image/webp', 7, 9],
    ['WebP extended', vp8x(4000, 3000), 'image/webp', 4000, 3000],
  ];
  for (const [label, data, type, width, height] of cases) {
    test(label, async () => {
      // The declared type and the extension lie; only the bytes count.
      const up = await upload(t, 'sysImage', admin, { filename: 'picture.bmp', type: 'text/plain', data });
      expect(up.status).toBe(200);
      expect(up.data).toMatchObject({ contentType: type, width, height, size: data.byteLength, extension: 'bmp', name: 'picture.bmp' });
      expect(Object.keys(up.data).sort()).toEqual(
        ['contentType', 'createdAt', 'createdBy', 'extension', 'height', 'id', 'name', 'sha256', 'size', 'url', 'width'].sort(),
      );
      expect(up.data.url).toMatch(/^\/app\/sysImage\/preview\?id=\d+&exp=\d+&s=[0-9a-f-]{36}&sig=/);
      // <img src=url>: no header, inline, the sniffed type.
      const res = await get(t, up.data.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('content-disposition')).toStartWith('inline; filename="picture.bmp"');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(new Uint8Array(await res.arrayBuffer()) as Uint8Array).toEqual(data);
    });
  }

  test('a JPEG whose frame header sits behind a 100 KiB EXIF segment', async () => {
    const app1 = [0xff, 0xe1, 0xff, 0xff, ...new Array<number>(65533).fill(0x45)];
    const app2 = [0xff, 0xe2, 0x90, 0x00, ...new Array<number>(0x9000 - 2).fill(0x49)];
    const base = jpeg(1234, 567);
    const data = bytes([0xff, 0xd8], app1, app2, Array.from(base.subarray(2)));
    const up = await upload(t, 'sysImage', admin, { filename: 'camera.jpg', type: 'image/jpeg', data }, { chunked: true, chunkSize: 4096 });
    expect(up.status).toBe(200);
    expect(up.data).toMatchObject({ width: 1234, height: 567 });
  });
});

describe('refused content → 415 and nothing stored', () => {
  const refused: [string, Uint8Array | string, string][] = [
    ['HTML named .png declared image/png', '<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>', 'image/png'],
    ['SVG with script', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="10" height="10"/></svg>', 'image/svg+xml'],
    ['SVG behind an XML prolog', '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', 'image/svg+xml'],
    ['PDF', '%PDF-1.7\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\n', 'image/png'],
    ['PNG truncated inside IHDR', pngWithData(10, 10).slice(0, 20), 'image/png'],
    ['PNG truncated before IEND', pngWithData(10, 10).slice(0, 500), 'image/png'],
    ['GIF without its trailer', gif89(5, 5).slice(0, -1), 'image/gif'],
    ['JPEG without EOI', jpeg(5, 5).slice(0, -2), 'image/jpeg'],
    ['WebP shorter than its RIFF header says', vp8(5, 5).slice(0, -4), 'image/webp'],
    ['PNG pixel flood 100000 x 100000', pngWithData(100_000, 100_000), 'image/png'],
    ['PNG 1 x 30000 strip', pngWithData(1, 30_000), 'image/png'],
    ['GIF with zero width', gif89(0, 10), 'image/gif'],
    ['empty file', new Uint8Array(0), 'image/png'],
    ['PNG signature only', new Uint8Array(PNG_SIG), 'image/png'],
  ];
  for (const [label, data, type] of refused) {
    test(label, async () => {
      const before = t.count('files');
      const blobs = t.count('blobs');
      const up = await upload(t, 'sysImage', admin, { filename: 'evil.png', type, data: typeof data === 'string' ? enc.encode(data) : data });
      expect(up.status).toBe(415);
      expect(up.json.data).toBeNull();
      expect(up.json.msg).toStartWith('file: ');
      expect(t.count('files')).toBe(before);
      expect(t.count('blobs')).toBe(blobs);
      nothingStored(t, before);
    });
  }

  test('a large non-image is refused at its first bytes, long before its end', async () => {
    let pulled = 0;
    const { multipart } = await import('./support/files.ts');
    const { body, contentType } = multipart([{ filename: 'fake.png', type: 'image/png', data: new Uint8Array(8 * 1024 * 1024).fill(0x41) }]);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        const off = pulled * 65536;
        if (off >= body.byteLength) return c.close();
        pulled++;
        c.enqueue(body.slice(off, off + 65536));
      },
    });
    const res = await t.app.request('/app/sysImage/upload', {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': contentType },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(415);
    expect(pulled).toBeLessThan(8);
  });

  test('images share the blob store: an image with the bytes of a stored file is deduplicated', async () => {
    const data = pngWithData(3, 3, 77);
    const asFile = await upload(t, 'sysFile', admin, { filename: 'x.png', type: 'image/png', data });
    const asImage = await upload(t, 'sysImage', admin, { filename: 'x.png', data });
    expect(asImage.data.sha256).toBe(asFile.data.sha256);
    expect((t.sqlite.query('SELECT ref_count FROM blobs WHERE sha256 = ?').get(asFile.data.sha256) as { ref_count: number }).ref_count).toBe(2);
    // Each kind sees only its own records.
    expect((await t.call('GET', `/app/sysImage/detail?id=${asFile.data.id}`, { token: admin })).status).toBe(404);
    expect((await t.call('GET', `/app/sysFile/detail?id=${asImage.data.id}`, { token: admin })).status).toBe(404);
    expect((await t.call('POST', '/app/sysImage/delete', { token: admin, body: { ids: [asFile.data.id] } })).status).toBe(200);
    expect((await get(t, asFile.data.url)).status).toBe(200);
  });
});

describe('image size limit', () => {
  test('over MAX_IMAGE_BYTES (with and without Content-Length) → 413, nothing stored', async () => {
    const small = await makeTestApp({ env: { MAX_IMAGE_BYTES: '4096' } });
    const token = await small.login();
    const data = pngWithData(10, 10, 5000);
    for (const chunked of [false, true]) {
      const up = await upload(small, 'sysImage', token, { filename: 'big.png', data }, { chunked });
      expect(up.status).toBe(413);
    }
    expect(small.count('files') + small.count('blobs')).toBe(0);
    expect(filesUnder(small.filesDir)).toEqual([]);
    // MAX_UPLOAD_BYTES (files) is separate and larger.
    expect((await upload(small, 'sysFile', token, { filename: 'big.png', data })).status).toBe(200);
  });
});

describe('page, detail, delete, preview', () => {
  let p: TestApp;
  let token: string;
  beforeAll(async () => {
    p = await makeTestApp();
    token = await p.login();
    p.clock.set(Date.parse('2026-11-01T00:00:00.000Z'));
    await upload(p, 'sysImage', token, { filename: 'logo.png', data: pngWithData(64, 64) });
    p.clock.set(Date.parse('2026-11-02T00:00:00.000Z'));
    await upload(p, 'sysImage', token, { filename: 'banner.gif', data: gif89(728, 90) });
    p.clock.set(Date.parse('2026-11-03T00:00:00.000Z'));
    await upload(p, 'sysImage', token, { filename: 'photo.jpg', data: jpeg(4000, 3000) });
  });

  test('page with filters and sorting; records carry width and height', async () => {
    const r = await p.call('POST', '/app/sysImage/page', { token, body: {} });
    expect(r.status).toBe(200);
    expect(r.data.total).toBe(3);
    expect(r.data.records.map((i: { name: string; width: number }) => [i.name, i.width])).toEqual([
      ['photo.jpg', 4000],
      ['banner.gif', 728],
      ['logo.png', 64],
    ]);
    const gif = await p.call('POST', '/app/sysImage/page', { token, body: { params: { contentType: 'gif' } } });
    expect(gif.data.records.map((i: { name: string }) => i.name)).toEqual(['banner.gif']);
    const ext = await p.call('POST', '/app/sysImage/page', { token, body: { params: { extension: 'png' } } });
    expect(ext.data.records.map((i: { name: string }) => i.name)).toEqual(['logo.png']);
    const bySize = await p.call('POST', '/app/sysImage/page', { token, body: { sortField: 'name', sortOrder: 'asc', params: { createdTo: '2026-11-02' } } });
    expect(bySize.data.records.map((i: { name: string }) => i.name)).toEqual(['banner.gif', 'logo.png']);
    expect((await p.call('POST', '/app/sysImage/page', { token, body: { params: { width: 1 } } })).status).toBe(400);
  });

  test('detail, ETag/304 and ranges on preview, delete (the bytes go with the sweep)', async () => {
    const first = (await p.call('POST', '/app/sysImage/page', { token, body: { params: { name: 'logo' } } })).data.records[0];
    const d = await p.call('GET', `/app/sysImage/detail?id=${first.id}`, { token });
    expect(d.data).toMatchObject({ id: first.id, width: 64, height: 64, contentType: 'image/png' });
    expect((await p.call('GET', '/app/sysImage/detail?id=0', { token })).status).toBe(400);
    expect((await p.call('GET', '/app/sysImage/detail?id=424242', { token })).status).toBe(404);
    expect((await get(p, d.data.url, undefined, { 'if-none-match': `W/"${d.data.sha256}"` })).status).toBe(304);
    const head = await get(p, d.data.url, undefined, { range: 'bytes=0-7' });
    expect(head.status).toBe(206);
    expect(Array.from(new Uint8Array(await head.arrayBuffer()))).toEqual(PNG_SIG);
    expect((await p.call('POST', '/app/sysImage/delete', { token, body: { ids: [first.id] } })).status).toBe(200);
    expect(p.count('files')).toBe(2);
    expect((await get(p, d.data.url)).status).toBe(404);
    expect(filesUnder(p.filesDir).some((f) => f.endsWith(d.data.sha256))).toBe(true);
    await sweepAfterGrace(p);
    expect(filesUnder(p.filesDir).some((f) => f.endsWith(d.data.sha256))).toBe(false);
    const log = p.sqlite.query(`SELECT module, action, status FROM op_log WHERE action = 'delete'`).all();
    expect(log).toEqual([{ module: 'sysImage', action: 'delete', status: 200 }]);
  });

  test('signed preview links: expired and tampered → 401, bearer token works', async () => {
    const rec = (await p.call('POST', '/app/sysImage/page', { token, body: { params: { name: 'banner' } } })).data.records[0];
    expect((await get(p, rec.url.replace(/sig=.{5}/, 'sig=AAAAA'))).status).toBe(401);
    expect((await get(p, rec.url.replace('/sysImage/preview', '/sysFile/download'))).status).toBe(401);
    expect((await get(p, `/app/sysImage/preview?id=${rec.id}`, token)).status).toBe(200);
    const now = p.clock.now();
    p.clock.advance(3601_000);
    expect((await get(p, rec.url)).status).toBe(401);
    p.clock.set(now);
    expect((await get(p, rec.url)).status).toBe(200);
  });
});

describe('permissions', () => {
  let a: TestApp;
  let id: number;
  let none: string;
  let all: string;
  beforeAll(async () => {
    a = await makeTestApp();
    const adminToken = await a.login();
    id = (await upload(a, 'sysImage', adminToken, { filename: 'p.gif', data: gif89(1, 1) })).data.id;
    none = (await userWithCodes(a, ['sys:file:upload', 'sys:file:page', 'sys:file:detail', 'sys:file:delete', 'sys:file:download'], 'filesonly')).token;
    all = (await userWithCodes(a, ['sys:image:upload', 'sys:image:page', 'sys:image:detail', 'sys:image:delete', 'sys:image:preview'], 'imager')).token;
  });
  const ops: GuardedOp[] = [
    { code: 'sys:image:upload', method: 'POST', path: '/app/sysImage/upload', request: () => ({ send: async (token) => answerOfUpload(await upload(a, 'sysImage', token, { filename: 'u.gif', data: gif89(2, 2) })) }) },
    { code: 'sys:image:page', method: 'POST', path: '/app/sysImage/page', request: () => ({ body: {} }) },
    { code: 'sys:image:detail', method: 'GET', path: '/app/sysImage/detail', request: () => ({ query: `id=${id}` }) },
    { code: 'sys:image:preview', method: 'GET', path: '/app/sysImage/preview', request: () => ({ send: async (token) => answerOf(await get(a, `/app/sysImage/preview?id=${id}`, token)) }) },
    { code: 'sys:image:delete', method: 'POST', path: '/app/sysImage/delete', request: () => ({ body: { ids: [999_999] } }) },
  ];
  for (const op of ops) {
    test(`${op.path.split('/')[3]}: anonymous 401, file codes only 403, image codes 200`, async () => {
      await expectGuarded(a, op, { refused: none, granted: all }, ['files', 'blobs']);
    });
  }
});
