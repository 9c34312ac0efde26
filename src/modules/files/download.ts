import { AppError } from '../../core/errors.ts';
import type { BlobStore } from '../../core/ports.ts';
import { contentDisposition } from './file-name.ts';
import type { FileRow } from './files.service.ts';
import { contentRange, etagMatches, parseRange } from './range.ts';

/**
 * Declared types a browser may be told for an attachment. Anything else (HTML, SVG, XML, script)
 * is served as application/octet-stream, so a stored file can never become a page on our origin.
 */
const SAFE_FILE_TYPES = new Set([
  'text/plain',
  'text/csv',
  'application/pdf',
  'application/json',
  'application/zip',
  'application/gzip',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'audio/mpeg',
  'video/mp4',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
]);

/** Every media type a download can be served with (for the OpenAPI document). */
export const SERVED_FILE_TYPES = [...SAFE_FILE_TYPES, 'application/octet-stream'];

export function servedContentType(row: FileRow): string {
  if (row.kind === 'image') return row.content_type;
  return SAFE_FILE_TYPES.has(row.content_type) ? row.content_type : 'application/octet-stream';
}

/**
 * The bytes of a stored file as an HTTP response: strong ETag (the sha256) with If-None-Match →
 * 304, a single byte range → 206 (If-Range honoured), an unsatisfiable one → 416 (an error
 * envelope, thrown), the body streamed from the blob store. Files are attachments, images inline;
 * both are locked down with nosniff and a sandboxing CSP in case someone opens them directly.
 */
export async function blobResponse(store: BlobStore, row: FileRow, headers: Headers): Promise<Response> {
  const etag = `"${row.sha256}"`;
  const common: Record<string, string> = {
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
  if (etagMatches(headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: common });

  const ifRange = headers.get('if-range');
  const range = ifRange !== null && ifRange.trim() !== etag ? ({ kind: 'full' } as const) : parseRange(headers.get('range'), row.size);
  if (range.kind === 'unsatisfiable') {
    throw new AppError('RANGE_NOT_SATISFIABLE', `Range: not satisfiable for a file of ${row.size} bytes`, {
      'Content-Range': contentRange(range, row.size)!,
    });
  }
  const partial = range.kind === 'partial';
  const body = await store.get(row.sha256, partial ? { offset: range.start, length: range.end - range.start + 1 } : undefined);
  // A row without its blob breaks an invariant: a plain Error is logged with the traceId, shown as 500.
  if (!body) throw new Error(`blob ${row.sha256} of file ${row.id} is missing from storage`);
  const out = new Headers(common);
  out.set('Content-Type', servedContentType(row));
  out.set('Content-Disposition', contentDisposition(row.kind === 'image' ? 'inline' : 'attachment', row.name));
  out.set('Content-Length', String(partial ? range.end - range.start + 1 : row.size));
  if (partial) out.set('Content-Range', contentRange(range, row.size)!);
  return new Response(body, { status: partial ? 206 : 200, headers: out });
}
