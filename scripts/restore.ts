/*
 * npm run restore -- <archive.tar>   (--to worker: see scripts/restore-worker.ts)
 *
 * Restores a sysBackup archive into the DATABASE_PATH and FILES_DIR the service is configured with
 * (same environment variables as `npm start`), while the service is stopped:
 *  1. refuses if a server answers on PORT or holds the database file;
 *  2. unpacks into a staging folder beside the database and verifies, before touching anything,
 *     every member's size and sha256 against the manifest, that every blob is named by its own
 *     checksum, that the snapshot passes `integrity_check`, and that this release knows its
 *     migrations;
 *  3. moves the current database and its stale -wal/-shm aside, puts the snapshot in place, adds
 *     the blobs to FILES_DIR (content-addressed: present ones are identical), and only once the
 *     restored database opens cleanly removes what it set aside (on any failure it is put back);
 *  4. prints what it restored.
 * Exit codes: 0 restored (or --help), 1 refused or failed (nothing changed), 64 usage.
 */
import { Database } from 'bun:sqlite';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { link, mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import * as tar from 'tar-stream';
import { parseConfig } from '../src/config.ts';
import { BACKUP_FORMAT_VERSION, DATABASE_MEMBER, MANIFEST } from '../src/adapters/server/backup-archive.ts';
import { MIGRATIONS_DIR } from '../src/adapters/server/migrate.ts';
import type { BackupManifest } from '../src/core/ports.ts';

export class RestoreRefused extends Error {
  override name = 'RestoreRefused';
}

const KEY = /^[0-9a-f]{64}$/;

/** Unpacks every member into `staging`, hashing as it goes; returns path → {size, sha256}. */
export async function unpack(archive: string, staging: string) {
  const seen = new Map<string, { size: number; sha256: string }>();
  const ex = tar.extract();
  const reading = pipeline(createReadStream(archive), ex as unknown as NodeJS.WritableStream);
  for await (const entry of ex) {
    const name = entry.header.name;
    const ok = name === MANIFEST || name === DATABASE_MEMBER || (name.startsWith('blobs/') && KEY.test(name.slice(6)));
    if (!ok || entry.header.type !== 'file' || seen.has(name)) throw new RestoreRefused(`unexpected member "${name}" in the archive: not a backup made by this service`);
    const hash = createHash('sha256');
    let size = 0;
    const target = join(staging, name);
    mkdirSync(dirname(target), { recursive: true });
    await pipeline(
      entry as unknown as NodeJS.ReadableStream,
      new Transform({
        transform(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          size += chunk.length;
          cb(null, chunk);
        },
      }),
      createWriteStream(target, { flags: 'wx', mode: 0o600 }),
    );
    seen.set(name, { size, sha256: hash.digest('hex') });
  }
  await reading;
  return seen;
}

export function verify(staging: string, seen: Map<string, { size: number; sha256: string }>): BackupManifest {
  if (!seen.has(MANIFEST)) throw new RestoreRefused('the archive has no manifest.json: not a complete backup');
  const manifest = JSON.parse(readFileSync(join(staging, MANIFEST), 'utf8')) as BackupManifest;
  if (manifest.format !== 'edge-admin-backup') throw new RestoreRefused('manifest.json is not an edge-admin backup manifest');
  if (manifest.formatVersion > BACKUP_FORMAT_VERSION) {
    throw new RestoreRefused(`the archive has format version ${manifest.formatVersion}; this release reads up to ${BACKUP_FORMAT_VERSION}: use a newer release`);
  }
  const listed = new Set(manifest.members.map((m) => m.path));
  for (const name of seen.keys()) if (name !== MANIFEST && !listed.has(name)) throw new RestoreRefused(`member ${name} is not listed in the manifest`);
  for (const m of manifest.members) {
    const got = seen.get(m.path);
    if (!got) throw new RestoreRefused(`member ${m.path} listed in the manifest is missing from the archive`);
    if (got.size !== m.size || got.sha256 !== m.sha256) throw new RestoreRefused(`member ${m.path} does not match its checksum in the manifest: the archive is damaged`);
    if (m.path.startsWith('blobs/') && m.sha256 !== m.path.slice(6)) throw new RestoreRefused(`blob ${m.path} does not hold the content its name says`);
  }
  if (!listed.has(DATABASE_MEMBER)) throw new RestoreRefused('the archive has no database snapshot');
  const db = new Database(join(staging, DATABASE_MEMBER), { readonly: true });
  try {
    const check = db.query('PRAGMA integrity_check(10)').all().map((r) => Object.values(r as object)[0]);
    if (check.length !== 1 || check[0] !== 'ok') throw new RestoreRefused(`the snapshot fails integrity_check (${check.slice(0, 2).join('; ')})`);
    const applied = db.query('SELECT name FROM d1_migrations ORDER BY id').all().map((r) => (r as { name: string }).name);
    const known = new Set(readdirSync(MIGRATIONS_DIR));
    const unknown = applied.filter((n) => !known.has(n));
    if (unknown.length) throw new RestoreRefused(`the snapshot was made by a newer release (migrations this release does not know: ${unknown.join(', ')}): restore with that release`);
  } finally {
    db.close();
  }
  return manifest;
}

/** Refuses while a server uses the database: one answering on PORT, or any process holding the file. */
async function refuseWhileRunning(dbPath: string, port: number) {
  const answered = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) }).then(
    (r) => r.ok,
    () => false,
  );
  if (answered) throw new RestoreRefused(`a server answers on PORT=${port}: stop the service before restoring`);
  if (!existsSync(dbPath)) return;
  // An exclusive lock is granted only when no other connection has the file open.
  const db = new Database(dbPath, { create: false });
  try {
    db.run('PRAGMA busy_timeout = 0');
    db.run('PRAGMA locking_mode = EXCLUSIVE');
    db.run('BEGIN EXCLUSIVE');
    db.run('ROLLBACK');
  } catch (e) {
    // Busy or locked means someone has it open; any other error (a damaged file) is what a restore is for.
    if (/^SQLITE_(BUSY|LOCKED)/.test(String((e as { code?: string }).code))) {
      throw new RestoreRefused(`another process holds DATABASE_PATH=${dbPath}: stop the service before restoring`);
    }
  } finally {
    db.close();
  }
}

export interface RestoreResult {
  manifest: BackupManifest;
  blobsAdded: number;
  blobsPresent: number;
}

/** The whole restore (see the header). Throws RestoreRefused with nothing changed. */
export async function restore(archive: string, env: Record<string, string | undefined>, opts: { skipRunningCheck?: boolean } = {}): Promise<RestoreResult> {
  const config = parseConfig(env);
  const dbPath = config.DATABASE_PATH;
  if (dbPath === ':memory:') throw new RestoreRefused('DATABASE_PATH=:memory: cannot be restored into');
  if (!existsSync(archive)) throw new RestoreRefused(`no such archive: ${archive}`);
  if (!opts.skipRunningCheck) await refuseWhileRunning(dbPath, config.PORT);

  const dataDir = dirname(dbPath);
  mkdirSync(dataDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:.]/g, '');
  const staging = join(dataDir, `.restore-${stamp}`);
  const aside = join(dataDir, `.replaced-${stamp}`);
  mkdirSync(staging, { recursive: true });
  try {
    const manifest = verify(staging, await unpack(archive, staging));

    // From here on things change; everything replaced goes aside first.
    mkdirSync(aside, { recursive: true });
    const moved: [string, string][] = [];
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      if (existsSync(dbPath + suffix)) {
        const to = join(aside, basename(dbPath) + suffix);
        renameSync(dbPath + suffix, to);
        moved.push([to, dbPath + suffix]);
      }
    }
    try {
      renameSync(join(staging, DATABASE_MEMBER), dbPath);
      let blobsAdded = 0;
      let blobsPresent = 0;
      for (const m of manifest.members) {
        if (!m.path.startsWith('blobs/')) continue;
        const key = m.sha256;
        const dest = join(config.FILES_DIR, key.slice(0, 2), key.slice(2, 4), key);
        if (existsSync(dest)) {
          blobsPresent++;
          continue;
        }
        await mkdir(dirname(dest), { recursive: true });
        await link(join(staging, m.path), dest).catch(() => renameSync(join(staging, m.path), dest));
        blobsAdded++;
      }
      // The restored database must open cleanly here before anything set aside is dropped.
      const db = new Database(dbPath);
      try {
        const q = db.query('PRAGMA quick_check').get() as { quick_check: string };
        if (q.quick_check !== 'ok') throw new Error(`the restored database fails quick_check: ${q.quick_check}`);
        db.run(`UPDATE backups SET status = 'failed', error_msg = 'was running when the restored snapshot was taken' WHERE status = 'running'`);
      } finally {
        db.close();
      }
      rmSync(aside, { recursive: true, force: true });
      return { manifest, blobsAdded, blobsPresent };
    } catch (e) {
      // Put the old database back exactly as it was (blobs added are harmless: the sweep removes unreferenced ones).
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(dbPath + suffix, { force: true });
      for (const [from, to] of moved) renameSync(from, to);
      rmSync(aside, { recursive: true, force: true });
      throw e;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const archive = args.find((a, i) => !a.startsWith('--') && !['--to', '--persist-to', '--database', '--bucket'].includes(args[i - 1] ?? ''));
  const to = args.includes('--to') ? args[args.indexOf('--to') + 1] : undefined;
  const usage =
    'usage: npm run restore -- <backup-….tar>   (the service must be stopped; DATABASE_PATH and FILES_DIR as for npm start)\n' +
    '       npm run restore -- <backup-….tar> --to worker [--local [--persist-to <dir>] | --remote] [--replace] [--database DB] [--bucket <name>]\n' +
    'Details: docs/backup-and-restore.md';
  // Asked for: the usage is the answer (stdout, 0). A wrong call: the usage is the error (stderr, 64).
  if (args.includes('--help') || args.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  if (!archive || (to !== undefined && to !== 'worker')) {
    console.error(usage);
    process.exit(64);
  }
  if (to === 'worker') await mainWorker(archive, args);
  else await mainServer(archive);
}

async function mainServer(archive: string) {
  try {
    const r = await restore(archive, process.env);
    const m = r.manifest;
    const config = parseConfig(process.env);
    console.log(`Restored ${basename(archive)} (taken ${m.createdAt}) into DATABASE_PATH=${config.DATABASE_PATH} and FILES_DIR=${config.FILES_DIR}`);
    console.log(`  migrations: ${m.migrations.length} (last ${m.migrations.at(-1)})`);
    console.log(`  rows: ${Object.entries(m.rowCounts).map(([t, n]) => `${t} ${n}`).join(', ')}`);
    console.log(`  blobs: ${r.blobsAdded} added, ${r.blobsPresent} already present`);
    const secretFile = join(dirname(config.DATABASE_PATH), '.jwt-secret');
    if (!config.JWT_SECRET && !existsSync(secretFile)) {
      // Said now, not discovered later as every old token refused.
      console.log(`  ${secretFile} does not exist and JWT_SECRET is not set: the service will generate a new signing secret`);
      console.log('  on its next start and refuse every token signed before. To keep them, copy the old install\'s .jwt-secret there.');
    } else {
      console.log('  Start the service with the same JWT_SECRET (or the same data folder) so existing tokens stay valid.');
    }
  } catch (e) {
    console.error(e instanceof RestoreRefused ? `Restore refused, nothing changed: ${e.message}` : `Restore failed, the previous data was put back: ${(e as Error).message}`);
    process.exit(1);
  }
}

async function mainWorker(archive: string, args: string[]) {
  const { parseWorkerArgs, restoreToWorker, stopChildren } = await import('./restore-worker.ts');
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(sig, () => {
      stopChildren();
      process.exit(130);
    });
  try {
    const target = parseWorkerArgs(args);
    const r = await restoreToWorker(archive, target, (line) => console.log(`- ${line}`));
    const place = target.remote ? 'remote' : `local state ${target.persistTo}`;
    console.log(`Restored ${basename(archive)} (taken ${r.manifest.createdAt}) into the Worker: D1 ${target.database} and R2 bucket ${target.bucket} (${place})`);
    console.log(`  rows: ${Object.entries(r.counts).map(([t, n]) => `${t} ${n}`).join(', ')}`);
    console.log(`  blobs: ${r.blobs} put into R2`);
    console.log(
      "  Existing tokens stay valid if the Worker's JWT_SECRET is the Bun install's (its JWT_SECRET, or the\n" +
        '  contents of .jwt-secret beside its database): `wrangler secret put JWT_SECRET` (locally: .dev.vars).',
    );
  } catch (e) {
    console.error(
      e instanceof RestoreRefused
        ? `Restore refused, the Worker's data was not changed: ${e.message}`
        : `Restore to the Worker failed: ${(e as Error).message}\n  The rows are loaded in one all-or-nothing step; blobs already put are harmless (the sweep removes unreferenced ones). Fix the cause and run it again with --replace.`,
    );
    process.exit(1);
  }
}
