import { beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup } from '../src/modules/maintenance/cleanup.ts';
import { D1_START_MS, makeTestApp, perRuntime, type AnyTestApp } from './support/app.ts';
import { filesUnder, get, multipart, randomBytes, sha256Hex, sweepAfterGrace, upload, type PartSpec } from './support/files.ts';
import { userWithCodes } from './support/rbac.ts';
import { answerOf, answerOfUpload, expectGuarded, type GuardedOp } from './support/scenario.ts';

const enc = new TextEncoder();
let t: AnyTestApp;
let admin: string;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

const bytesOf = async (res: Response): Promise<Uint8Array> => new Uint8Array(await res.arrayBuffer());
const blobFiles = (app: AnyTestApp) => filesUnder(app.filesDir).filter((f) => !f.startsWith('tmp/'));
const tmpFiles = (app: AnyTestApp) => filesUnder(app.filesDir).filter((f) => f.startsWith('tmp/'));

function suite() {
  describe('upload and download round trips', () => {
    const cases: [string, Uint8Array, string, boolean, number?][] = [
      ['utf-8 text', enc.encode('Grüße, 世界! 👋\r\nline two\n'), 'text/plain', false],
      ['all 256 byte values', Uint8Array.from({ length: 256 }, (_, i) => i), 'application/octet-stream', false],
      ['all 256 byte values, chunked in 1-byte pieces', Uint8Array.from({ length: 256 }, (_, i) => 255 - i), 'application/octet-stream', true, 1],
      ['3 MiB random, with Content-Length', randomBytes(3 * 1024 * 1024), 'application/zip', false],
      ['3 MiB random, chunked (odd chunk size)', randomBytes(3 * 1024 * 1024 + 17), 'application/zip', true, 65_521],
      ['empty file', new Uint8Array(0), 'text/plain', false],
    ];
    for (const [label, data, type, chunked, chunkSize] of cases) {
      test(label, async () => {
        const up = await upload(t, 'sysFile', admin, { filename: 'data.bin', type, data }, { chunked, chunkSize });
        expect(up.status).toBe(200);
        expect(up.data.size).toBe(data.byteLength);
        expect(up.data.sha256).toBe(await sha256Hex(data));
        expect(up.data.contentType).toBe(type);
        // With the token…
        const viaToken = await get(t, `/app/sysFile/download?id=${up.data.id}`, admin);
        expect(viaToken.status).toBe(200);
        expect(await bytesOf(viaToken)).toEqual(data);
        // …and through the signed link, with no header at all.
        const viaLink = await get(t, up.data.url);
        expect(viaLink.status).toBe(200);
        expect(viaLink.headers.get('content-length')).toBe(String(data.byteLength));
        expect(await bytesOf(viaLink)).toEqual(data);
      });
    }

    test('the record has exactly the contract fields, and detail returns the same', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: 'Report.PDF', type: 'application/pdf', data: '%PDF-1.4 tiny' });
      expect(Object.keys(up.data).sort()).toEqual(
        ['contentType', 'createdAt', 'createdBy', 'extension', 'id', 'name', 'sha256', 'size', 'url'].sort(),
      );
      expect(up.data).toMatchObject({ name: 'Report.PDF', extension: 'pdf', contentType: 'application/pdf', createdBy: 1 });
      expect(up.data.url).toMatch(new RegExp(`^/app/sysFile/download\\?id=${up.data.id}&exp=\\d+&s=[0-9a-f-]{36}&sig=[A-Za-z0-9_-]{43}$`));
      const d = await t.call('GET', `/app/sysFile/detail?id=${up.data.id}`, { token: admin });
      expect(d.status).toBe(200);
      expect(d.data).toEqual(up.data);
    });

    test('download headers: attachment with filename*, nosniff, sandbox CSP, strong ETag; unsafe types become octet-stream', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: 'page.html', type: 'text/html', data: '<script>alert(1)</script>' });
      expect(up.data.contentType).toBe('text/html');
      const res = await get(t, up.data.url);
      expect(res.headers.get('content-type')).toBe('application/octet-stream');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="page.html"; filename*=UTF-8''page.html`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(res.headers.get('etag')).toBe(`"${up.data.sha256}"`);
      const uni = await upload(t, 'sysFile', admin, { filenameStar: 'отчёт 2026.txt', type: 'text/plain', data: 'x' });
      expect(uni.data.name).toBe('отчёт 2026.txt');
      const res2 = await get(t, uni.data.url);
      expect(res2.headers.get('content-type')).toBe('text/plain');
      expect(res2.headers.get('content-disposition')).toContain(`filename*=UTF-8''%D0%BE%D1%82%D1%87%D1%91%D1%82%202026.txt`);
    });
  });

  describe('dedupe and reference counting', () => {
    test('two uploads share one blob; it is marked with the last record and removed by the sweep after the grace period', async () => {
      const data = randomBytes(100_000);
      const sha = await sha256Hex(data);
      const a = await upload(t, 'sysFile', admin, { filename: 'a.bin', data });
      const b = await upload(t, 'sysFile', admin, { filename: 'b.bin', data }, { chunked: true });
      expect(a.data.sha256).toBe(sha);
      expect(b.data.sha256).toBe(sha);
      expect(a.data.id).not.toBe(b.data.id);
      const blobRow = () => t.row<{ ref_count: number }>('SELECT ref_count FROM blobs WHERE sha256 = ?', sha);
      const onDisk = () => blobFiles(t).filter((f) => f.endsWith(sha));
      expect((await blobRow())?.ref_count).toBe(2);
      expect(onDisk()).toEqual([`${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`]);

      const del1 = await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [a.data.id, 999_999] } });
      expect(del1.status).toBe(200);
      expect((await blobRow())?.ref_count).toBe(1);
      expect(onDisk()).toHaveLength(1);
      expect((await get(t, b.data.url)).status).toBe(200);
      expect((await get(t, a.data.url)).status).toBe(404);

      const del2 = await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [b.data.id] } });
      expect(del2.status).toBe(200);
      // The delete only marks the blob; its content stays for backups taken before the delete.
      expect((await blobRow())?.ref_count).toBe(0);
      expect(onDisk()).toHaveLength(1);
      expect((await get(t, b.data.url)).status).toBe(404);
      await sweepAfterGrace(t);
      expect(await blobRow()).toBeNull();
      expect(onDisk()).toEqual([]);
      expect(tmpFiles(t)).toEqual([]);
    });

    test('deleting the same id twice at once does not double-count', async () => {
      const data = enc.encode('twice');
      const sha = await sha256Hex(data);
      const a = await upload(t, 'sysFile', admin, { filename: 'a.txt', data });
      const b = await upload(t, 'sysFile', admin, { filename: 'b.txt', data });
      await Promise.all([
        t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [a.data.id] } }),
        t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [a.data.id] } }),
      ]);
      expect((await t.row<{ ref_count: number }>('SELECT ref_count FROM blobs WHERE sha256 = ?', sha))!.ref_count).toBe(1);
      expect((await get(t, b.data.url)).status).toBe(200);
    });

    test('batch delete validation: empty, >100, non-integer ids → 400 and nothing deleted', async () => {
      const before = await t.count('files');
      for (const ids of [[], Array.from({ length: 101 }, (_, i) => i + 1), ['1 OR 1=1'], [-1], [1.5]]) {
        const r = await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids } });
        expect(r.status).toBe(400);
      }
      expect(await t.count('files')).toBe(before);
    });
  });

  describe('size limits', () => {
    let small: AnyTestApp;
    let token: string;
    const LIMIT = 200 * 1024;
    beforeAll(async () => {
      small = await makeTestApp({ runtime: t.runtime, env: { MAX_UPLOAD_BYTES: String(LIMIT) } });
      token = await small.login();
    }, D1_START_MS);
    const nothingStored = async () => {
      expect(await small.count('files')).toBe(0);
      expect(await small.count('blobs')).toBe(0);
      expect(filesUnder(small.filesDir)).toEqual([]);
    };

    test('exactly the limit is accepted (then removed again)', async () => {
      const up = await upload(small, 'sysFile', token, { filename: 'max.bin', data: randomBytes(LIMIT) }, { chunked: true });
      expect(up.status).toBe(200);
      await small.call('POST', '/app/sysFile/delete', { token, body: { ids: [up.data.id] } });
      await sweepAfterGrace(small);
      await nothingStored();
    });

    test('one byte over with Content-Length → 413, nothing stored', async () => {
      const up = await upload(small, 'sysFile', token, { filename: 'big.bin', data: randomBytes(LIMIT + 1) });
      expect(up.status).toBe(413);
      expect(up.json.msg).toContain('file: must be at most');
      await nothingStored();
    });

    test('far over with Content-Length → 413 before the body is read', async () => {
      let pulled = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          pulled++;
          c.enqueue(new Uint8Array(1024));
        },
      });
      const res = await small.app.request('/app/sysFile/upload', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(10 * LIMIT) },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(pulled).toBeLessThanOrEqual(1); // at most the stream's own prefetch
      await nothingStored();
    });

    test('over the limit without Content-Length (chunked stream) → 413, nothing stored, no temp file left', async () => {
      for (const size of [LIMIT + 1, 5 * LIMIT]) {
        const up = await upload(small, 'sysFile', token, { filename: 'big.bin', data: randomBytes(size) }, { chunked: true, chunkSize: 10_000 });
        expect(up.status).toBe(413);
        await nothingStored();
      }
    });

    test('an endless chunked body is cut off', async () => {
      const { body: headPart, contentType } = multipart([{ filename: 'endless.bin', data: '' }]);
      const prefix = headPart.slice(0, headPart.indexOf(13, 60) + 4); // up to the part's blank line
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(prefix);
        },
        pull(c) {
          sent += 65536;
          c.enqueue(new Uint8Array(65536));
        },
      });
      const res = await small.app.request('/app/sysFile/upload', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(sent).toBeLessThan(LIMIT + 4 * 65536);
      await nothingStored();
    });

    test('a body cut off mid-file (no closing boundary) → 400, nothing stored', async () => {
      const { body, contentType } = multipart([{ filename: 'cut.bin', data: randomBytes(50_000) }]);
      const res = await small.app.request('/app/sysFile/upload', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
        body: body.slice(0, 30_000),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { msg: string }).msg).toContain('ended before');
      await nothingStored();
    });

    test('malformed requests → 400: not multipart, no file part, field without a file name', async () => {
      const notMultipart = await small.call('POST', '/app/sysFile/upload', { token, body: { file: 'x' } });
      expect(notMultipart.status).toBe(400);
      const other = await upload(small, 'sysFile', token, { name: 'other', filename: 'a.txt', data: 'x' });
      expect(other.status).toBe(400);
      expect(other.json.msg).toContain('"file"');
      const field = await upload(small, 'sysFile', token, { name: 'file', data: 'just text' });
      expect(field.status).toBe(400);
      const badEscape = multipart([{ filename: 'a', data: 'x' }]);
      const raw = new TextDecoder().decode(badEscape.body).replace('filename="a"', `filename*=UTF-8''%E0%A4%A`);
      const res = await small.app.request('/app/sysFile/upload', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': badEscape.contentType },
        body: raw,
      });
      expect(res.status).toBe(400);
      await nothingStored();
    });
  });

  describe('hostile file names', () => {
    const names: [string, (name: string) => void][] = [
      ['../../x', (n) => expect(n).toBe('x')],
      ['/etc/passwd', (n) => expect(n).toBe('passwd')],
      ['C:\\Windows\\System32\\evil.dll', (n) => expect(n).toBe('evil.dll')],
      ['CON', (n) => expect(n).toBe('_CON')],
      ['con.txt', (n) => expect(n).toBe('_con.txt')],
      [`${'a'.repeat(300)}.txt`, (n) => expect(n).toBe(`${'a'.repeat(196)}.txt`)],
      ['invoice\u202Egpj.exe', (n) => expect(n).toBe('invoicegpj.exe')],
      ['nul\u0000byte.txt', (n) => expect(n).toBe('nulbyte.txt')],
      ['line\r\nbreak.txt', (n) => expect(n).toBe('linebreak.txt')],
      ['..', (n) => expect(n).toBe('file')],
    ];
    for (const [raw, check] of names) {
      test(JSON.stringify(raw), async () => {
        const before = blobFiles(t);
        const data = enc.encode(`content for ${raw}`);
        const up = await upload(t, 'sysFile', admin, { filename: 'ignored', filenameStar: raw, data });
        expect(up.status).toBe(200);
        check(up.data.name);
        expect(up.data.name).not.toMatch(/[\\/\u0000-\u001f\u202e]/);
        // Storage paths come from the content hash alone.
        const added = blobFiles(t).filter((f) => !before.includes(f));
        expect(added).toEqual([`${up.data.sha256.slice(0, 2)}/${up.data.sha256.slice(2, 4)}/${up.data.sha256}`]);
        const res = await get(t, up.data.url);
        expect(await bytesOf(res)).toEqual(data);
        expect(res.headers.get('content-disposition')).not.toMatch(/[\r\n\u0000]/);
      });
    }

    test('a plain quoted filename with path parts is cut to its last segment too', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: '../../../tmp/owned.sh', data: 'echo' });
      expect(up.status).toBe(200);
      expect(up.data.name).toBe('owned.sh');
      expect(up.data.extension).toBe('sh');
    });
  });

  describe('UTF-8 file names, in every form clients send them', () => {
    // [what, name sent, name stored]
    const names: [string, string, string][] = [
      ['CJK', '名前 資料.txt', '名前 資料.txt'],
      ['Cyrillic', 'отчёт за 2026.docx', 'отчёт за 2026.docx'],
      ['emoji (ZWJ family kept)', '🎉 party 👨\u200d👩\u200d👧.png', '🎉 party 👨\u200d👩\u200d👧.png'],
      ['Arabic', 'تقرير.pdf', 'تقرير.pdf'],
      ['RTL override (stripped)', 'invoice\u202Egpj.exe', 'invoicegpj.exe'],
    ];
    const forms: [string, (name: string) => Omit<PartSpec, 'data'>][] = [
      // What browsers send: the raw UTF-8 bytes inside the quotes.
      ['raw UTF-8 filename', (name) => ({ filename: name })],
      ['filename* (RFC 8187)', (name) => ({ filenameStar: name })],
      ['percent-encoded filename', (name) => ({ filename: encodeURIComponent(name) })],
    ];
    for (const [what, sent, stored] of names) {
      for (const [form, part] of forms) {
        test(`${what} as ${form}: stored sanitised, handed back in Content-Disposition`, async () => {
          const up = await upload(t, 'sysFile', admin, { ...part(sent), type: 'application/octet-stream', data: `${what} ${form}` });
          expect({ status: up.status, msg: up.json.msg }).toEqual({ status: 200, msg: 'SUCCESS' });
          expect(up.data.name).toBe(stored);
          const res = await get(t, up.data.url);
          expect(res.status).toBe(200);
          const cd = res.headers.get('content-disposition')!;
          const star = /filename\*=UTF-8''([^;]+)/.exec(cd)?.[1];
          expect(star).toBeDefined();
          expect(decodeURIComponent(star!)).toBe(stored);
          // The plain fallback is ASCII only, for agents that ignore filename*.
          expect(/filename="([^"]*)"/.exec(cd)?.[1]).toMatch(/^[\x20-\x7e]+$/);
        });
      }
    }

    test('a raw UTF-8 name with the escapes browsers use for quote, CR and LF', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: '引用%22文%0D%0A.txt', data: 'q' });
      expect(up.status).toBe(200);
      expect(up.data.name).toBe('引用"文.txt');
    });

    test('curl-style quoted-pairs: \\" is a quote, other backslashes are path separators', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: 'dir\\say \\"hi\\".txt', data: 'q' });
      expect(up.status).toBe(200);
      expect(up.data.name).toBe('say "hi".txt');
    });
  });

  describe('conditional and range requests', () => {
    let rec: { id: number; url: string; sha256: string };
    const data = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    beforeAll(async () => {
      rec = (await upload(t, 'sysFile', admin, { filename: 'range.bin', data })).data;
    });

    test('If-None-Match with the ETag → 304 without a body', async () => {
      const res = await get(t, rec.url, undefined, { 'if-none-match': `"${rec.sha256}"` });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('etag')).toBe(`"${rec.sha256}"`);
      const other = await get(t, rec.url, undefined, { 'if-none-match': '"something-else"' });
      expect(other.status).toBe(200);
    });

    test('single byte ranges → 206 with Content-Range', async () => {
      for (const [header, start, end] of [
        ['bytes=0-0', 0, 0],
        ['bytes=10-19', 10, 19],
        ['bytes=990-', 990, 999],
        ['bytes=-5', 995, 999],
        ['bytes=900-5000', 900, 999],
      ] as const) {
        const res = await get(t, rec.url, undefined, { range: header });
        expect(res.status).toBe(206);
        expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/1000`);
        expect(res.headers.get('content-length')).toBe(String(end - start + 1));
        expect(await bytesOf(res)).toEqual(data.slice(start, end + 1));
      }
    });

    test('unsatisfiable range → 416 envelope with Content-Range */size; multi-range and junk → full 200', async () => {
      const res = await get(t, rec.url, undefined, { range: 'bytes=1000-' });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe('bytes */1000');
      const body = (await res.json()) as { status: number; data: unknown };
      expect(body.status).toBe(416);
      expect(body.data).toBeNull();
      for (const h of ['bytes=0-1,5-6', 'items=0-1', 'bytes=5-1']) {
        const full = await get(t, rec.url, undefined, { range: h });
        expect(full.status).toBe(200);
        expect((await bytesOf(full)).byteLength).toBe(1000);
      }
    });

    test('If-Range with a different ETag ignores Range', async () => {
      const res = await get(t, rec.url, undefined, { range: 'bytes=0-9', 'if-range': '"stale"' });
      expect(res.status).toBe(200);
      const ok = await get(t, rec.url, undefined, { range: 'bytes=0-9', 'if-range': `"${rec.sha256}"` });
      expect(ok.status).toBe(206);
    });
  });

  describe('signed links', () => {
    let rec: { id: number; url: string };
    let other: { id: number; url: string };
    beforeAll(async () => {
      rec = (await upload(t, 'sysFile', admin, { filename: 'signed.txt', data: 'signed' })).data;
      other = (await upload(t, 'sysFile', admin, { filename: 'other.txt', data: 'other' })).data;
    });
    const parts = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams) as { id: string; exp: string; s: string; sig: string };

    test('a deleted file id is never given to a new upload, so its old link cannot serve other content', async () => {
      const first = (await upload(t, 'sysFile', admin, { filename: 'payroll-a.txt', data: 'salary A' })).data;
      expect((await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [first.id] } })).status).toBe(200);
      const second = (await upload(t, 'sysFile', admin, { filename: 'payroll-b.txt', data: 'salary B' })).data;
      expect(second.id).toBeGreaterThan(first.id);
      expect((await get(t, first.url)).status).toBe(404);
    });

    test('valid without any header', async () => {
      const res = await get(t, rec.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('signed');
    });

    test('tampered signature, other id, other action, missing or junk exp → 401 envelope', async () => {
      const p = parts(rec.url);
      const flipped = p.sig.slice(0, 10) + (p.sig[10] === 'A' ? 'B' : 'A') + p.sig.slice(11);
      const bad = [
        `/app/sysFile/download?id=${p.id}&exp=${p.exp}&s=${p.s}&sig=${flipped}`,
        `/app/sysFile/download?id=${other.id}&exp=${p.exp}&s=${p.s}&sig=${p.sig}`,
        `/app/sysFile/download?id=${p.id}&exp=${Number(p.exp) + 3600}&s=${p.s}&sig=${p.sig}`,
        `/app/sysFile/download?id=${p.id}&s=${p.s}&sig=${p.sig}`,
        `/app/sysFile/download?id=${p.id}&exp=abc&s=${p.s}&sig=${p.sig}`,
        `/app/sysFile/download?id=${p.id}&exp=${p.exp}&s=${p.s}`,
        // Without the session it names, or naming another one (issue 26: a link is its session's).
        `/app/sysFile/download?id=${p.id}&exp=${p.exp}&sig=${p.sig}`,
        `/app/sysFile/download?id=${p.id}&exp=${p.exp}&s=${p.s.replace(/.$/, (c) => (c === '0' ? '1' : '0'))}&sig=${p.sig}`,
      ];
      for (const url of bad) {
        const res = await get(t, url);
        expect(res.status).toBe(401);
        expect(((await res.json()) as { status: number }).status).toBe(401);
      }
      // A download link is not a preview link.
      const asPreview = await get(t, rec.url.replace('/sysFile/download', '/sysImage/preview'));
      expect(asPreview.status).toBe(401);
    });

    test('expired (pinned clock moved past LINK_TTL_SECONDS) → 401; a fresh link from detail works', async () => {
      const url = rec.url;
      const start = t.clock.now();
      t.clock.advance(3600_000 + 1000);
      try {
        const res = await get(t, url);
        expect(res.status).toBe(401);
        expect(((await res.json()) as { msg: string }).msg).toContain('expired');
        const fresh = await t.call('GET', `/app/sysFile/detail?id=${rec.id}`, { token: await t.login() });
        expect((await get(t, fresh.data.url)).status).toBe(200);
      } finally {
        t.clock.set(start);
      }
    });

    test('links point at records, not content: a deleted record`s link is 404', async () => {
      const gone = (await upload(t, 'sysFile', admin, { filename: 'gone.txt', data: 'gone soon' })).data;
      await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [gone.id] } });
      expect((await get(t, gone.url)).status).toBe(404);
    });
  });

  describe('page', () => {
    let p: AnyTestApp;
    let token: string;
    beforeAll(async () => {
      p = await makeTestApp({ runtime: t.runtime });
      token = await p.login();
      const files: [string, string, number][] = [
        ['alpha.txt', 'text/plain', 10],
        ['beta.csv', 'text/csv', 30],
        ['gamma.txt', 'text/plain', 20],
        ['100%_done.txt', 'text/plain', 5],
      ];
      for (const [i, [name, type, size]] of files.entries()) {
        p.clock.set(Date.parse(`2026-11-0${i + 1}T12:00:00.000Z`));
        expect((await upload(p, 'sysFile', token, { filename: name, type, data: 'x'.repeat(size) })).status).toBe(200);
      }
    }, D1_START_MS);
    const page = (body: unknown) => p.call('POST', '/app/sysFile/page', { token, body });

    test('defaults: newest first, total and pages, signed urls', async () => {
      const r = await page({});
      expect(r.status).toBe(200);
      expect(r.data).toMatchObject({ total: 4, size: 10, current: 1, pages: 1, searchCount: true });
      expect(r.data.records.map((f: { name: string }) => f.name)).toEqual(['100%_done.txt', 'gamma.txt', 'beta.csv', 'alpha.txt']);
      expect(r.data.records[0].url).toContain('/app/sysFile/download?id=');
    });

    test('filters: name (literal %), extension, contentType, created range; sort by size', async () => {
      const names = async (body: unknown) => ((await page(body)).data.records as { name: string }[]).map((f) => f.name);
      expect(await names({ params: { name: 'a' } })).toEqual(['gamma.txt', 'beta.csv', 'alpha.txt']);
      expect(await names({ params: { name: '%' } })).toEqual(['100%_done.txt']);
      expect(await names({ params: { extension: 'CSV' } })).toEqual(['beta.csv']);
      expect(await names({ params: { contentType: 'csv' } })).toEqual(['beta.csv']);
      expect(await names({ params: { createdFrom: '2026-11-02', createdTo: '2026-11-03' } })).toEqual(['gamma.txt', 'beta.csv']);
      expect(await names({ sortField: 'size', sortOrder: 'asc' })).toEqual(['100%_done.txt', 'alpha.txt', 'gamma.txt', 'beta.csv']);
      const second = await page({ pageNo: 2, pageSize: 3 });
      expect(second.data.records).toHaveLength(1);
      expect(second.data.pages).toBe(2);
    });

    test('unknown params, sort fields or oversize pages → 400', async () => {
      for (const body of [{ params: { sha256: 'x' } }, { sortField: 'sha256' }, { pageSize: 101 }, { params: { extension: '../x' } }, { extra: 1 }]) {
        expect((await page(body)).status).toBe(400);
      }
    });

    test('images are not listed among files', async () => {
      const { png } = await import('./support/images.ts');
      expect((await upload(p, 'sysImage', token, { filename: 'i.png', data: png(2, 2) })).status).toBe(200);
      expect((await page({})).data.total).toBe(4);
    });
  });

  describe('operation log', () => {
    test('upload (success and failure) and delete write one row each with useful params', async () => {
      const o = await makeTestApp({ runtime: t.runtime, env: { MAX_UPLOAD_BYTES: '1024' } });
      const token = await o.login();
      const ok = await upload(o, 'sysFile', token, { filename: 'log.txt', type: 'text/plain', data: 'logged' });
      expect(ok.status).toBe(200);
      const big = await upload(o, 'sysFile', token, { filename: 'big.txt', data: 'x'.repeat(5000) }, { chunked: true });
      expect(big.status).toBe(413);
      await o.call('POST', '/app/sysFile/delete', { token, body: { ids: [ok.data.id] } });
      const rows = await o.rows<{
        module: string;
        action: string;
        status: number;
        params: string;
        error_msg: string | null;
      }>('SELECT module, action, status, params, error_msg FROM op_log ORDER BY id');
      expect(rows.map((r) => [r.module, r.action, r.status])).toEqual([
        ['sysFile', 'upload', 200],
        ['sysFile', 'upload', 413],
        ['sysFile', 'delete', 200],
      ]);
      expect(JSON.parse(rows[0]!.params)).toMatchObject({ name: 'log.txt', size: 6, contentType: 'text/plain', id: ok.data.id });
      expect(JSON.parse(rows[1]!.params)).toMatchObject({ name: 'big.txt' });
      expect(rows[1]!.error_msg).toContain('at most');
      expect(JSON.parse(rows[2]!.params)).toEqual({ ids: [ok.data.id] });
    });
  });

  describe('permissions', () => {
    let a: AnyTestApp;
    let none: string;
    let all: string;
    let id: number;
    let adminToken: string;
    beforeAll(async () => {
      a = await makeTestApp({ runtime: t.runtime });
      adminToken = await a.login();
      id = (await upload(a, 'sysFile', adminToken, { filename: 'p.txt', data: 'perm' })).data.id;
      none = (await userWithCodes(a, ['sys:image:upload', 'sys:image:page'], 'nobody')).token;
      all = (await userWithCodes(a, ['sys:file:upload', 'sys:file:page', 'sys:file:detail', 'sys:file:delete', 'sys:file:download'], 'filer')).token;
    }, D1_START_MS);

    const ops: GuardedOp[] = [
      { code: 'sys:file:upload', method: 'POST', path: '/app/sysFile/upload', request: () => ({ send: async (token) => answerOfUpload(await upload(a, 'sysFile', token, { filename: 'u.txt', data: 'u' })) }) },
      { code: 'sys:file:page', method: 'POST', path: '/app/sysFile/page', request: () => ({ body: {} }) },
      { code: 'sys:file:detail', method: 'GET', path: '/app/sysFile/detail', request: () => ({ query: `id=${id}` }) },
      { code: 'sys:file:download', method: 'GET', path: '/app/sysFile/download', request: () => ({ send: async (token) => answerOf(await get(a, `/app/sysFile/download?id=${id}`, token)) }) },
      { code: 'sys:file:delete', method: 'POST', path: '/app/sysFile/delete', request: () => ({ body: { ids: [999_999] } }) },
    ];
    for (const op of ops) {
      test(`${op.path.split('/')[3]}: anonymous 401, without the code 403, with it 200`, async () => {
        await expectGuarded(a, op, { refused: none, granted: all }, ['files', 'blobs']);
      });
    }

    test('every route declares its code (x-permission) in OpenAPI; download also accepts the signed link', async () => {
      const doc = (await (await a.app.request('/openapi.json')).json()) as {
        paths: Record<string, Record<string, { 'x-permission'?: string; security?: unknown[] }>>;
        components: { securitySchemes: Record<string, unknown> };
      };
      const expected: Record<string, string> = {
        '/app/sysFile/upload': 'sys:file:upload',
        '/app/sysFile/page': 'sys:file:page',
        '/app/sysFile/detail': 'sys:file:detail',
        '/app/sysFile/delete': 'sys:file:delete',
        '/app/sysFile/download': 'sys:file:download',
        '/app/sysImage/upload': 'sys:image:upload',
        '/app/sysImage/page': 'sys:image:page',
        '/app/sysImage/detail': 'sys:image:detail',
        '/app/sysImage/delete': 'sys:image:delete',
        '/app/sysImage/preview': 'sys:image:preview',
      };
      for (const [path, code] of Object.entries(expected)) {
        const op = Object.values(doc.paths[path] ?? {})[0];
        expect(op?.['x-permission']).toBe(code);
      }
      // A token, an API key (docs/api-keys.md) or a signed link.
      expect(doc.paths['/app/sysFile/download']?.get?.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }, { signedLink: [] }]);
      expect(doc.components.securitySchemes.signedLink).toBeDefined();
      expect(JSON.stringify(doc.paths['/app/sysFile/upload'])).toContain('multipart/form-data');
    });
  });

  describe('orphan cleanup', () => {
    test('removes blobs without a row and rows at zero references after the grace period, stale temp files after an hour', async () => {
      const c = await makeTestApp({ runtime: t.runtime });
      const token = await c.login();
      const kept = (await upload(c, 'sysFile', token, { filename: 'kept.txt', data: 'kept' })).data;
      // A crash between writing a blob and its rows leaves a blob file without a row.
      const orphan = await sha256Hex(enc.encode('orphan'));
      const dir = join(c.filesDir, orphan.slice(0, 2), orphan.slice(2, 4));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, orphan), 'orphan');
      mkdirSync(join(c.filesDir, 'tmp'), { recursive: true });
      writeFileSync(join(c.filesDir, 'tmp', 'interrupted'), 'half');
      const zero = await sha256Hex(enc.encode('zero'));
      await c.exec(
        `INSERT INTO blobs (sha256, size, ref_count, created_at, unreferenced_at) VALUES (?, 4, 0, '2026-01-01T00:00:00.000Z', ?)`,
        zero,
        new Date(Date.now() - 25 * 3600_000).toISOString(),
      );

      // Nothing younger than the grace period is touched (the row unreferenced for 25 h goes).
      c.clock.set(Date.now());
      let counts = await cleanup(c.deps);
      expect(counts).toMatchObject({ blobsUnreferenced: 1, blobsOrphaned: 0, blobsStaging: 0 });
      expect(blobFiles(c).some((f) => f.endsWith(orphan))).toBe(true);

      c.clock.set(Date.now() + 2 * 3600_000);
      counts = await cleanup(c.deps);
      expect(counts).toMatchObject({ blobsOrphaned: 0, blobsStaging: 1 });
      expect(blobFiles(c).some((f) => f.endsWith(orphan))).toBe(true);

      c.clock.set(Date.now() + 25 * 3600_000);
      counts = await cleanup(c.deps);
      expect(counts).toMatchObject({ blobsOrphaned: 1 });
      expect(blobFiles(c)).toEqual([`${kept.sha256.slice(0, 2)}/${kept.sha256.slice(2, 4)}/${kept.sha256}`]);
      expect(tmpFiles(c)).toEqual([]);
      expect((await get(c, `/app/sysFile/download?id=${kept.id}`, await c.login())).status).toBe(200);
    });
  });
}
