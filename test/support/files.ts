import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AnyTestApp } from './app.ts';
import { cleanup } from '../../src/modules/maintenance/cleanup.ts';

export interface PartSpec {
  name?: string;
  filename?: string;
  /** Sent as filename*=UTF-8''… (RFC 5987) instead of a quoted filename. */
  filenameStar?: string;
  type?: string;
  data: Uint8Array | string;
}

const enc = new TextEncoder();

/** A multipart/form-data body built by hand, so tests control every byte (and hostile names). */
export function multipart(parts: PartSpec[], boundary = `----edgeadmin${crypto.randomUUID().replaceAll('-', '')}`) {
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    let disposition = `form-data; name="${p.name ?? 'file'}"`;
    if (p.filename !== undefined) disposition += `; filename="${p.filename}"`;
    if (p.filenameStar !== undefined) disposition += `; filename*=UTF-8''${encodeURIComponent(p.filenameStar)}`;
    let head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n`;
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(enc.encode(head + '\r\n'), typeof p.data === 'string' ? enc.encode(p.data) : p.data, enc.encode('\r\n'));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let off = 0;
  for (const c of chunks) {
    body.set(c, off);
    off += c.byteLength;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A body without Content-Length: the bytes as a stream of `chunkSize` pieces. */
export function chunkedStream(bytes: Uint8Array, chunkSize = 64 * 1024): ReadableStream<Uint8Array> {
  let off = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (off >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(off, off + chunkSize));
      off += chunkSize;
    },
  });
}

export type Module = 'sysFile' | 'sysImage';

/** POSTs an upload; `chunked` sends a stream (no Content-Length). */
export async function upload(
  t: AnyTestApp,
  module: Module,
  token: string | undefined,
  parts: PartSpec[] | PartSpec,
  opts: { chunked?: boolean; chunkSize?: number; headers?: Record<string, string> } = {},
) {
  const { body, contentType } = multipart(Array.isArray(parts) ? parts : [parts]);
  const headers: Record<string, string> = { 'content-type': contentType, ...opts.headers };
  if (token) headers.authorization = `Bearer ${token}`;
  const init: RequestInit & { duplex?: 'half' } = { method: 'POST', headers };
  if (opts.chunked) {
    init.body = chunkedStream(body, opts.chunkSize);
    init.duplex = 'half';
  } else {
    init.body = body;
    headers['content-length'] = String(body.byteLength);
  }
  const res = await t.request(`/app/${module}/upload`, init);
  const json = (await res.json()) as { status: number; msg: string; data: any };
  return { res, status: res.status, json, data: json.data };
}

/** Every file under `dir` (relative paths), to check what storage holds. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p, rel ? `${rel}/${n}` : n);
      else out.push(rel ? `${rel}/${n}` : n);
    }
  };
  walk(dir, '');
  return out.sort();
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', data as BufferSource));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let off = 0; off < n; off += 65536) crypto.getRandomValues(out.subarray(off, Math.min(n, off + 65536)));
  return out;
}

/** GET with optional bearer token and headers; the raw response (downloads are not envelopes). */
export function get(t: AnyTestApp, path: string, token?: string, headers: Record<string, string> = {}) {
  return t.app.request(path, { headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
}

/**
 * Runs the scheduled cleanup as if BLOB_GRACE_HOURS (plus a minute) had passed, then puts the
 * clock back, so signed links minted before stay valid for the rest of the file.
 */
export async function sweepAfterGrace(t: AnyTestApp) {
  const before = t.clock.now();
  t.clock.advance(t.deps.config.BLOB_GRACE_HOURS * 3_600_000 + 60_000);
  try {
    return await cleanup(t.deps);
  } finally {
    t.clock.set(before);
  }
}
