import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar-stream';
import type { BackupArchives, BackupManifest, BlobStore } from '../../core/ports.ts';
import type { OpenSqlite, SqlExec } from './sqlite-binding.ts';

/** Archive names the API hands out; anything else is refused before it meets the filesystem. */
export const BACKUP_NAME = /^backup-[0-9A-Za-z-]{1,80}\.tar$/;
export const MANIFEST = 'manifest.json';
export const DATABASE_MEMBER = 'database.sqlite';
export const BACKUP_FORMAT_VERSION = 1;

const quote = (path: string) => `'${path.replaceAll("'", "''")}'`;

/** Snapshot facts read from the copy itself, so they describe exactly what the archive holds. */
function describeSnapshot(openSqlite: OpenSqlite, path: string) {
  const snap = openSqlite(path, { exclusive: false });
  try {
    const q = snap.sql.query.bind(snap.sql);
    const migrations = q<{ name: string }>('SELECT name FROM d1_migrations ORDER BY id').map((r) => r.name);
    const tables = q<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`);
    const rowCounts: Record<string, number> = {};
    for (const { name } of tables) rowCounts[name] = q<{ n: number }>(`SELECT count(*) AS n FROM "${name.replaceAll('"', '""')}"`)[0]!.n;
    const blobs = q<{ sha256: string }>('SELECT DISTINCT sha256 FROM files ORDER BY sha256').map((r) => r.sha256);
    // Fold the copy's own WAL back in, so the archived file is complete on its own.
    snap.sql.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    snap.sql.exec('PRAGMA journal_mode = DELETE');
    return { migrations, rowCounts, blobs };
  } finally {
    snap.close();
  }
}

/** Adds one member from a stream, with backpressure; returns the sha256 of what went in. */
function addMember(pack: tar.Pack, name: string, size: number, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  return new Promise((resolve, reject) => {
    const entry = pack.entry({ name, size, mode: 0o600, mtime: new Date(0) }, (err) => (err ? reject(err) : resolve(hash.digest('hex'))));
    (async () => {
      for await (const chunk of source) {
        hash.update(chunk);
        if (!entry.write(chunk)) await new Promise<void>((r) => entry.once('drain', () => r()));
      }
      (entry as unknown as { end(): void }).end();
    })().catch((e) => {
      entry.destroy(e);
      reject(e);
    });
  });
}

/**
 * Backup archives as tar files in `dir` (made with tar-stream): `database.sqlite` — a consistent
 * snapshot taken with `VACUUM INTO` through the service's own connection, so it works whatever the
 * locking mode and sees one committed state — then `blobs/<sha256>` for every blob the snapshot's
 * files reference (immutable: removed only by the sweep after BLOB_GRACE_HOURS), then
 * `manifest.json` with the format version, creation time, applied migrations, row counts and the
 * sha256 of every member. Written to a hidden temporary name and renamed when complete.
 */
export function serverBackupArchives(opts: { dir: string; sql: SqlExec; openSqlite: OpenSqlite; blobs: BlobStore }): BackupArchives {
  const pathOf = (name: string) => {
    if (!BACKUP_NAME.test(name)) throw new Error(`invalid backup name ${name}`);
    return join(opts.dir, name);
  };

  async function create(name: string, createdAt: string) {
    const final = pathOf(name);
    const work = join(opts.dir, `.${name}.work`);
    await mkdir(work, { recursive: true });
    const partial = join(opts.dir, `.${name}.partial`);
    try {
      const snapshot = join(work, DATABASE_MEMBER);
      opts.sql.exec(`VACUUM INTO ${quote(snapshot)}`);
      const facts = describeSnapshot(opts.openSqlite, snapshot);

      const pack = tar.pack();
      const fh = await open(partial, 'wx', 0o600);
      const archiveHash = createHash('sha256');
      let size = 0;
      let manifest!: BackupManifest;
      const writing = (async () => {
        for await (const chunk of pack as AsyncIterable<Uint8Array>) {
          archiveHash.update(chunk);
          size += chunk.byteLength;
          let off = 0;
          while (off < chunk.byteLength) off += (await fh.write(chunk, off, chunk.byteLength - off)).bytesWritten;
        }
      })();
      try {
        const members: BackupManifest['members'] = [];
        const dbSize = (await stat(snapshot)).size;
        members.push({ path: DATABASE_MEMBER, size: dbSize, sha256: await addMember(pack, DATABASE_MEMBER, dbSize, createReadStream(snapshot)) });
        for (const key of facts.blobs) {
          const head = await opts.blobs.head(key);
          const body = head && (await opts.blobs.get(key));
          if (!head || !body) throw new Error(`blob ${key} referenced by the snapshot is missing from file storage`);
          const path = `blobs/${key}`;
          const sha256 = await addMember(pack, path, head.size, Readable.fromWeb(body as unknown as import('node:stream/web').ReadableStream<Uint8Array>));
          if (sha256 !== key) throw new Error(`blob ${key} in file storage does not match its checksum (${sha256})`);
          members.push({ path, size: head.size, sha256 });
        }
        manifest = {
          format: 'edge-admin-backup',
          formatVersion: BACKUP_FORMAT_VERSION,
          createdAt,
          migrations: facts.migrations,
          rowCounts: facts.rowCounts,
          members,
        };
        const json = new TextEncoder().encode(JSON.stringify(manifest, null, 2));
        await addMember(pack, MANIFEST, json.byteLength, [json]);
        pack.finalize();
        await writing;
        await fh.datasync();
      } catch (e) {
        pack.destroy(e as Error);
        await writing.catch(() => undefined);
        throw e;
      } finally {
        await fh.close();
      }
      await rename(partial, final);
      return { size, sha256: archiveHash.digest('hex'), manifest };
    } finally {
      await rm(work, { recursive: true, force: true });
      await unlink(partial).catch(() => undefined);
    }
  }

  return {
    async create(name, createdAt) {
      await mkdir(opts.dir, { recursive: true });
      return create(name, createdAt);
    },
    async open(name) {
      const path = pathOf(name);
      const s = await stat(path).catch(() => null);
      if (!s?.isFile()) return null;
      return { body: Readable.toWeb(createReadStream(path)) as unknown as ReadableStream<Uint8Array>, size: s.size };
    },
    async remove(name) {
      await unlink(pathOf(name)).catch((e: { code?: string }) => {
        if (e.code !== 'ENOENT') throw e;
      });
    },
  };
}
