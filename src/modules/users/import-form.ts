import { AppError, badRequest } from '../../core/errors.ts';

/** Multipart framing and the small fields allowed beyond the file's own limit. */
const FRAMING_BYTES = 64 * 1024;

export interface ImportForm {
  bytes: Uint8Array;
  fileName: string;
  updateSupport: boolean;
  dryRun: boolean;
}

const flag = (name: string, v: FormDataEntryValue | null): boolean => {
  if (v === null || v === '' || v === 'false') return false;
  if (v === 'true') return true;
  throw badRequest(`${name}: must be true or false`);
};

/**
 * The import's multipart body: read whole, but never more than `maxFileBytes` plus framing (413
 * beyond, whatever Content-Length says or whether it is sent at all), then parsed by the
 * runtime's own FormData (Bun, Node, Deno and workerd all have it).
 */
export async function readImportForm(req: Request, maxFileBytes: number): Promise<ImportForm> {
  const type = req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) throw badRequest('body: must be multipart/form-data with a `file` field');
  const max = maxFileBytes + FRAMING_BYTES;
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${Math.round(maxFileBytes / 1024 / 1024)} MiB`);
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (declared > max) throw tooLarge();
  const parts: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) {
        await reader.cancel();
        throw tooLarge();
      }
      parts.push(value);
    }
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const p of parts) (body.set(p, at), (at += p.byteLength));
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': type } }).formData();
  } catch {
    throw badRequest('body: malformed multipart/form-data');
  }
  const file = form.get('file');
  if (file === null || typeof file === 'string') throw badRequest('file: is required (a file field named `file`)');
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.byteLength > maxFileBytes) throw tooLarge();
  if (bytes.byteLength === 0) throw badRequest('file: is empty');
  return { bytes, fileName: file.name.slice(0, 200), updateSupport: flag('updateSupport', form.get('updateSupport')), dryRun: flag('dryRun', form.get('dryRun')) };
}
