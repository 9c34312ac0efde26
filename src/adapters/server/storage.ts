import { open, statfs, unlink, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ClassifyError, StorageFailure, StorageProbe } from '../../core/ports.ts';

// SQLite primary result codes (the low byte of an extended code).
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_FULL = 13;

interface RawError {
  code?: unknown;
  errno?: unknown;
  errcode?: unknown;
  message?: unknown;
  cause?: unknown;
}

function fromCode(n: number): StorageFailure | undefined {
  const primary = n & 0xff;
  if (primary === SQLITE_BUSY || primary === SQLITE_LOCKED) return 'busy';
  if (primary === SQLITE_FULL) return 'full';
  return undefined;
}

/**
 * Busy and full errors of the server's SQLite bindings and of the filesystem:
 * bun:sqlite (`code` 'SQLITE_BUSY…'/'SQLITE_FULL', `errno` the extended code), node:sqlite
 * (`errcode` the extended code) and node:fs (`code` 'ENOSPC'/'EDQUOT'). Anything else is left to
 * the error mapper as an unexpected error.
 */
export const classifyServerError: ClassifyError = (err) => {
  for (let e = err as RawError | undefined, depth = 0; e && typeof e === 'object' && depth < 4; e = e.cause as RawError, depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (code === 'ENOSPC' || code === 'EDQUOT') return 'full';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
    if (code.startsWith('SQLITE_FULL')) return 'full';
    if (typeof e.errcode === 'number') return fromCode(e.errcode);
    if (code.startsWith('SQLITE') && typeof e.errno === 'number') return fromCode(e.errno);
  }
  return undefined;
};

/** Free space and writability of the folders holding the database file and the blobs. */
export function diskStorageProbe(paths: { databasePath: string; filesDir: string }): StorageProbe {
  const dirs = [paths.filesDir];
  if (paths.databasePath !== ':memory:') dirs.push(dirname(paths.databasePath));
  return {
    async freeBytes() {
      let least = Number.POSITIVE_INFINITY;
      for (const d of dirs) {
        const s = await statfs(d);
        least = Math.min(least, Number(s.bavail) * Number(s.bsize));
      }
      return least;
    },
    async checkWritable() {
      const tmp = join(paths.filesDir, 'tmp');
      await mkdir(tmp, { recursive: true });
      const file = join(tmp, `.ready-${crypto.randomUUID()}`);
      const fh = await open(file, 'wx', 0o600);
      try {
        await fh.write('ready');
        await fh.datasync();
      } finally {
        await fh.close();
        await unlink(file).catch(() => undefined);
      }
    },
  };
}
