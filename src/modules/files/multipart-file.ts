import * as Multipart from 'multipasta';
import { AppError, badRequest } from '../../core/errors.ts';
import { parseFormDisposition } from './form-disposition.ts';

/** The file part of a multipart/form-data body, its bytes still unread. */
export interface FilePart {
  fileName: string;
  /** The part's declared Content-Type (untrusted). */
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

export interface FilePartOptions {
  field: string;
  /** Cap on raw body bytes read (file + framing + other fields); beyond it → 413. */
  maxBodyBytes: number;
  tooLarge: () => AppError;
}

function describe(e: Multipart.MultipartError): AppError {
  switch (e._tag) {
    case 'InvalidBoundary':
      return badRequest('body: must be multipart/form-data with a boundary');
    case 'ReachedLimit':
      return badRequest(`body: too many or too large form fields (${e.limit})`);
    case 'EndNotReached':
      return badRequest('file: the upload ended before the file was complete');
    default:
      return badRequest('body: malformed multipart/form-data');
  }
}

/**
 * Finds the part named `field` that carries a file name and returns it as a pull-driven stream.
 * multipasta is a push parser; we feed it one body chunk at a time, only when the consumer asks for
 * more, so memory stays at about one network chunk however large the upload, and a slow consumer
 * (disk, R2) slows the client down instead of buffering. Other fields are skipped.
 */
export async function openFilePart(body: ReadableStream<Uint8Array>, contentType: string, opts: FilePartOptions): Promise<FilePart> {
  const reader = body.getReader();
  let bodyBytes = 0;
  let failure: Multipart.MultipartError | undefined;
  let target: { fileName: string; contentType: string; queue: Uint8Array[]; ended: boolean } | undefined;
  // Our own Content-Disposition reading (see form-disposition.ts), not multipasta's.
  const disposition = (info: Multipart.PartInfo) => parseFormDisposition(info.headers['content-disposition'] as string | undefined);

  const parser = Multipart.make({
    headers: { 'content-type': contentType },
    isFile: (info) => disposition(info).fileName !== undefined,
    maxParts: 32,
    maxFieldSize: 64 * 1024,
    onField() {},
    onFile(info) {
      const { name, fileName = '' } = disposition(info);
      if (target || name !== opts.field) return () => {};
      // Without a Content-Type of its own, a file part is octet-stream (RFC 7578).
      const contentType = info.headers['content-type'] ? info.contentType : 'application/octet-stream';
      const t = { fileName, contentType, queue: [] as Uint8Array[], ended: false };
      target = t;
      return (chunk) => {
        if (chunk === null) t.ended = true;
        else t.queue.push(chunk);
      };
    },
    onError(e) {
      failure ??= e;
    },
    onDone() {},
  });

  const fail = async (err: AppError): Promise<never> => {
    await reader.cancel(err).catch(() => undefined);
    throw err;
  };

  /** Feeds the next body chunk to the parser; false once the body has ended. */
  async function pump(): Promise<boolean> {
    const { done, value } = await reader.read();
    if (done) {
      parser.end();
      if (failure) await fail(describe(failure));
      return false;
    }
    bodyBytes += value.byteLength;
    if (bodyBytes > opts.maxBodyBytes) await fail(opts.tooLarge());
    try {
      parser.write(value);
    } catch {
      // e.g. a malformed percent-escape in filename*; the parser throws instead of reporting.
      await fail(badRequest('body: malformed multipart/form-data'));
    }
    if (failure) await fail(describe(failure));
    return true;
  }

  while (!target) {
    if (!(await pump())) throw badRequest(`${opts.field}: a file part named "${opts.field}" is required`);
  }
  const part = target;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (part.queue.length) {
            for (const chunk of part.queue) controller.enqueue(chunk);
            part.queue = [];
            return;
          }
          if (part.ended) {
            controller.close();
            // The rest of the body (closing boundary, later fields) is of no interest.
            await reader.cancel().catch(() => undefined);
            return;
          }
          // The parser may only finish the part when the body ends (a short final chunk), so look again.
          if (!(await pump()) && !part.ended && !part.queue.length) throw describe({ _tag: 'EndNotReached' });
        }
      },
      async cancel(reason) {
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  return { fileName: part.fileName, contentType: part.contentType, body: stream };
}
