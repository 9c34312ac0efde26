import process from 'node:process';
import { ConfigError } from '../config.ts';

/** sysexits' EX_CONFIG: a supervisor should not restart in a loop; an operator must act. */
export const EXIT_CONFIG = 78;

/** A start-up failure already phrased for the operator (what, cause, fix) in one line. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** The variable a start-up step works on, so a raw error can name it. */
export interface Subject {
  name: string;
  value: string;
}

interface RawError {
  code?: unknown;
  errno?: unknown;
  errcode?: unknown;
  message?: unknown;
}

/** SQLite's primary result code of a bun:sqlite or node:sqlite error, if it is one. */
function sqliteCode(e: RawError): number | undefined {
  if (typeof e.errcode === 'number') return e.errcode & 0xff;
  if (typeof e.code === 'string' && e.code.startsWith('SQLITE') && typeof e.errno === 'number') return e.errno & 0xff;
  return undefined;
}

const uid = () => (typeof process.getuid === 'function' ? ` (this process runs as uid ${process.getuid()})` : '');
const RESTORE = 'restore it from a backup (npm run restore -- <archive>)';

/**
 * One line naming the variable and its value, the cause and the fix, for the raw errors a start can
 * meet: a file that is not a database or is corrupt, a read-only or foreign-owned file, a database
 * held by another process, a full disk, a port in use.
 */
export function explainStartupError(err: unknown, subject?: Subject, opts: { exclusive?: boolean } = {}): string {
  if (err instanceof ConfigError || err instanceof StartupError) return err.message;
  const e = (err ?? {}) as RawError;
  const message = typeof e.message === 'string' ? e.message : String(err);
  const code = typeof e.code === 'string' ? e.code : '';
  const what = subject ? `${subject.name}=${subject.value}` : 'start-up';
  switch (sqliteCode(e)) {
    case 26: // SQLITE_NOTADB
      return `${what} is not a SQLite database (or its header is damaged): ${RESTORE} or set ${subject?.name ?? 'DATABASE_PATH'} to another file`;
    case 11: // SQLITE_CORRUPT
      return `${what} is corrupt (${message}): ${RESTORE}; the server does not serve a corrupt database`;
    case 5: // SQLITE_BUSY
    case 6: // SQLITE_LOCKED
      return opts.exclusive
        ? `another process holds ${what} (SQLITE_EXCLUSIVE=true): stop it or set SQLITE_EXCLUSIVE=false`
        : `another process holds ${what} locked (it may run with SQLITE_EXCLUSIVE=true, or hold a long transaction): stop it and start again`;
    case 8: // SQLITE_READONLY
      return `${what} cannot be written${uid()} (${message}): make the file and its folder writable by this user, or mount the filesystem read-write`;
    case 14: // SQLITE_CANTOPEN
      return `${what} cannot be opened${uid()}: check that its folder exists and that this user may create and write files in it`;
    case 13: // SQLITE_FULL
      return `the disk holding ${what} is full: free some space and start again`;
    case 10: // SQLITE_IOERR
      return `${what}: disk I/O error (${message}): check the disk and the filesystem (is it full or read-only?)`;
  }
  if (code === 'ENOSPC' || code === 'EDQUOT') return `the disk holding ${what} is full: free some space and start again`;
  if (code === 'EROFS') return `${what} is on a read-only filesystem: mount it read-write or choose a writable path`;
  if (code === 'EACCES' || code === 'EPERM') return `${what} is not accessible${uid()}: fix the owner or permissions of the path`;
  if (code === 'EADDRINUSE') return `${what} is already in use: stop the other server or choose another port`;
  if (code === 'ENOTDIR' || code === 'EEXIST') return `${what}: a path component is a file, not a folder: choose another path`;
  return `start-up failed at ${what}: ${message.split('\n')[0]} (run with LOG_LEVEL=debug for the stack)`;
}

/** Runs one start-up step; a raw failure becomes a StartupError naming `subject`. */
export async function step<T>(subject: Subject, fn: () => T | Promise<T>, opts: { exclusive?: boolean } = {}): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof StartupError || e instanceof ConfigError) throw e;
    throw new StartupError(explainStartupError(e, subject, opts), { cause: e });
  }
}

/** Prints the one line (and, at LOG_LEVEL=debug, the stack of the cause) and exits with 78. */
export function exitOnStartupError(err: unknown, logLevel: string | undefined): never {
  // One line, whatever the cause's text holds (SQLite's check reports span lines).
  console.error(explainStartupError(err).replace(/\s*\n\s*/g, ' '));
  if (logLevel === 'debug') {
    const cause = err instanceof StartupError && err.cause ? err.cause : err;
    console.error((cause as Error)?.stack ?? String(cause));
  }
  process.exit(EXIT_CONFIG);
}
