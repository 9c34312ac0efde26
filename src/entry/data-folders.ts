import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import process from 'node:process';
import { StartupError } from './startup-errors.ts';

/** The project's own data folder: what a first `npm start` creates without being asked. */
export const DEFAULT_DATA_DIR = './data';

export interface FolderRule {
  /** CREATE_MISSING_DIRS=true: create missing folders anywhere, not only under ./data. */
  createMissing: boolean;
  cwd?: string;
}

/** Whether `path` is the project's ./data or lies inside it (relative to the working directory). */
export function insideDefaultData(path: string, cwd = process.cwd()): boolean {
  const rel = relative(resolve(cwd, DEFAULT_DATA_DIR), resolve(cwd, path));
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel));
}

const isFolder = (path: string) => statSync(path).isDirectory();

/**
 * Creates the last part of `target` (a folder, or the file's place) but, outside the project's
 * ./data, never a missing folder above it: such a path is far more often a typo (`/srv/edge-amdin/…`)
 * than a wish, and creating it would start a silent fresh install (a new, empty database with a
 * new administrator, or uploads nobody finds again). CREATE_MISSING_DIRS=true creates them.
 */
function refuseMissingParent(name: string, value: string, parent: string, rule: FolderRule) {
  if (existsSync(parent)) {
    if (!isFolder(parent)) throw new StartupError(`${name}=${value}: ${parent} is a file, not a folder: choose another path`);
    return;
  }
  if (rule.createMissing || insideDefaultData(parent, rule.cwd)) return;
  throw new StartupError(
    `${name}=${value}: the folder ${parent} does not exist (a mistyped path would start a brand-new, empty install): fix the path, create the folder, or set CREATE_MISSING_DIRS=true to have it created`,
  );
}

/** Makes folder `dir` (FILES_DIR, BACKUP_DIR) exist, as refuseMissingParent allows. */
export function ensureFolder(name: string, dir: string, rule: FolderRule): void {
  const abs = resolve(rule.cwd ?? process.cwd(), dir);
  if (existsSync(abs)) {
    if (!isFolder(abs)) throw new StartupError(`${name}=${dir} is a file, not a folder: choose another path`);
    return;
  }
  refuseMissingParent(name, dir, dirname(abs), rule);
  mkdirSync(abs, { recursive: true });
}

/**
 * DATABASE_PATH must name a file: a folder there is said to be one (SQLite's own answer, "unable to
 * open database file", reads like a missing folder). The file's folder must exist outside ./data.
 * Returns whether the database file was there before this start (else this is a fresh install).
 */
export function prepareDatabasePath(path: string, rule: FolderRule): { existed: boolean } {
  if (path === ':memory:') return { existed: false };
  const abs = resolve(rule.cwd ?? process.cwd(), path);
  if (existsSync(abs)) {
    if (isFolder(abs)) {
      throw new StartupError(`DATABASE_PATH=${path} is a folder, not a database file: set DATABASE_PATH to a file in it, e.g. ${path.replace(/[\\/]+$/, '')}/admin.db`);
    }
    return { existed: true };
  }
  refuseMissingParent('DATABASE_PATH', path, dirname(abs), rule);
  mkdirSync(dirname(abs), { recursive: true });
  return { existed: false };
}
