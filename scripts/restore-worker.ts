/*
 * npm run restore -- <archive.tar> --to worker [--local [--persist-to <dir>] | --remote] [--replace]
 *
 * Loads a sysBackup archive of a Bun install into a Workers deployment: how a single-machine
 * install moves to Cloudflare. Everything goes through wrangler (the project's wrangler.toml: D1
 * binding DB, the R2 bucket bound as FILES), so the same command works on the local state that
 * `wrangler dev` uses and on the real account:
 *  1. unpacks and verifies the archive exactly as the Bun restore does (every member's size and
 *     sha256, blob names = content, integrity_check, no migration this release does not know)
 *     before anything is touched;
 *  2. brings the snapshot (a private copy) up to this release's migrations, and the target up to
 *     the same with `wrangler d1 migrations apply`, then refuses unless both schemas are identical
 *     and (without --replace) the target holds no users yet;
 *  3. puts every blob into R2 under the key the Worker reads (`blobs/<sha256>`), with its checksum;
 *  4. loads the rows in ONE `wrangler d1 execute --file`: deletes of every table (the migrations
 *     seed menus and roles), then multi-row INSERTs under D1's 100 KB statement limit, in foreign
 *     key order, the rebuild of each table kept by triggers (src/db/derived-tables.ts: loading
 *     their rows too would count twice), and the AUTOINCREMENT high-water marks (so no deleted id
 *     is handed out again).
 *     Locally wrangler runs the file as one batch, remotely as one import: all or nothing.
 *     `d1_migrations` is the target's own (the schemas were checked equal);
 *  5. counts the rows of every table through wrangler and compares them with the snapshot.
 */
import { Database } from 'bun:sqlite';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/adapters/bun/migrate.ts';
import { DATABASE_MEMBER } from '../src/adapters/server/backup-archive.ts';
import { DERIVED_TABLES } from '../src/db/derived-tables.ts';
import type { BackupManifest } from '../src/core/ports.ts';
import { RestoreRefused, unpack, verify } from './restore.ts';

const ROOT = join(import.meta.dir, '..');
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
/** D1's limit on one SQL statement is 100,000 bytes; rows are grouped below it with room to spare. */
export const MAX_STATEMENT_BYTES = 90_000;
const BLOB_PREFIX = 'blobs/';

export interface WorkerTarget {
  remote: boolean;
  /** --local only: wrangler's state folder (default .wrangler/state, as `wrangler dev` uses). */
  persistTo: string;
  /** Overwrite a target that already holds users. */
  replace: boolean;
  database: string;
  bucket: string;
}

export function parseWorkerArgs(args: string[]): WorkerTarget {
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes('--local') && args.includes('--remote')) throw new RestoreRefused('--local and --remote exclude each other');
  const remote = args.includes('--remote');
  if (remote && value('--persist-to')) throw new RestoreRefused('--persist-to applies to --local only');
  return {
    remote,
    persistTo: value('--persist-to') ?? join(ROOT, '.wrangler/state'),
    replace: args.includes('--replace'),
    database: value('--database') ?? 'DB',
    bucket: value('--bucket') ?? bucketFromConfig(),
  };
}

/** The bucket bound as FILES in wrangler.toml (wrangler's r2 commands take the bucket name, not the binding). */
function bucketFromConfig(): string {
  const config = Bun.TOML.parse(readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')) as { r2_buckets?: { binding: string; bucket_name: string }[] };
  const files = config.r2_buckets?.find((b) => b.binding === 'FILES');
  if (!files) throw new RestoreRefused('wrangler.toml binds no R2 bucket as FILES: pass --bucket <name>');
  return files.bucket_name;
}

const children = new Set<ChildProcess>();
/** Stops every wrangler this process started (their process groups: wrangler → workerd). */
export function stopChildren() {
  for (const c of children) {
    try {
      process.kill(-c.pid!, 'SIGTERM');
    } catch {}
  }
  children.clear();
}

function wrangler(args: string[]): Promise<string> {
  const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1' };
  // No stdin: wrangler applies without asking; its own process group, so it can be stopped whole.
  const child = spawn('node', [WRANGLER, ...args], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((ok, fail) =>
    child.once('exit', (code) => {
      children.delete(child);
      if (code === 0) ok(out);
      else fail(new Error(`wrangler ${args.slice(0, 3).join(' ')} failed (exit ${code}): ${(err || out).trim().split('\n').slice(-8).join(' | ')}`));
    }),
  );
}

const where = (t: WorkerTarget) => (t.remote ? ['--remote'] : ['--local', '--persist-to', t.persistTo]);

/** Runs statements through `wrangler d1 execute --json`; one result set per statement. */
async function d1Query(t: WorkerTarget, sql: string): Promise<Record<string, unknown>[][]> {
  const out = await wrangler(['d1', 'execute', t.database, ...where(t), '--json', '--yes', '--command', sql]);
  const parsed = JSON.parse(out.slice(out.indexOf('['))) as { results: Record<string, unknown>[] }[];
  return parsed.map((r) => r.results);
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** Schema text as stored, minus comments and spacing (wrangler strips comments when it splits a migration). */
const normalise = (sql: string | null) =>
  (sql ?? '')
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim();
const SCHEMA_SQL = `SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'index', 'trigger', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY type, name`;

/** The data tables of the snapshot in foreign-key order (a table after every table it references). */
function tablesInKeyOrder(db: Database): string[] {
  const tables = (db.query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'd1_migrations' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
  const refs = new Map(tables.map((t) => [t, (db.query(`SELECT DISTINCT "table" AS ref FROM pragma_foreign_key_list(?)`).all(t) as { ref: string }[]).map((r) => r.ref).filter((r) => r !== t)]));
  const order: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (order.includes(t) || path.has(t)) return; // a cycle is left to PRAGMA defer_foreign_keys
    path.add(t);
    for (const r of refs.get(t) ?? []) if (refs.has(r)) visit(r, path);
    order.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return order;
}

/**
 * Tables that triggers fill (the log count tables of migrations 0011 and 0017): derived data. Their
 * rows are not copied — inserting the logs fires the same triggers on the target, which rebuild
 * them; a copy on top would count every row twice. Those also in DERIVED_TABLES (the prefix trees,
 * whose shape depends on the order rows came and went; `prefix_lengths` may not be loaded yet while
 * the logs load) are rebuilt from the rows once everything is in.
 */
export function derivedTables(db: Database): Set<string> {
  const bodies = (db.query(`SELECT sql FROM sqlite_master WHERE type = 'trigger'`).all() as { sql: string }[]).map((r) => r.sql);
  const written = bodies.flatMap((b) => [...b.matchAll(/\bINSERT\s+(?:OR\s+\w+\s+)?INTO\s+["`[]?(\w+)/gi)].map((m) => m[1]!.toLowerCase()));
  return new Set(written);
}

/**
 * The SQL file that replaces the target's rows with the snapshot's. Values come from SQLite's own
 * quote() (exact for integers, reals, text and blobs). Returns the file text and the row counts.
 */
export function dataSql(db: Database): { sql: string; counts: Record<string, number>; statements: number } {
  const tables = tablesInKeyOrder(db);
  const derived = derivedTables(db);
  const lines = ['PRAGMA defer_foreign_keys = on;'];
  for (const t of [...tables].reverse()) lines.push(`DELETE FROM ${ident(t)};`);
  const counts: Record<string, number> = {};
  let statements = lines.length;
  for (const t of tables) {
    counts[t] = 0;
    // Kept by triggers while the rows load, and rebuilt once at the end (see derived-tables.ts): a
    // rebuild also drops rows the triggers leave behind (an organisation whose users all left, n = 0).
    if (Object.hasOwn(DERIVED_TABLES, t)) {
      // The rows the rebuild will leave (a kept table may hold rows a rebuild drops, e.g. n = 0).
      db.run('SAVEPOINT derived');
      db.run(DERIVED_TABLES[t]!.rebuild);
      counts[t] = (db.query(`SELECT count(*) AS n FROM ${ident(t)}`).get() as { n: number }).n;
      db.run('ROLLBACK TO derived; RELEASE derived');
      continue;
    }
    const cols = (db.query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`).all(t) as { name: string }[]).map((r) => r.name);
    const head = `INSERT INTO ${ident(t)} (${cols.map(ident).join(', ')}) VALUES `;
    const tuple = `'(' || ${cols.map((c) => `quote(${ident(c)})`).join(" || ', ' || ")} || ')'`;
    let batch: string[] = [];
    let bytes = Buffer.byteLength(head);
    const flush = () => {
      if (!batch.length) return;
      lines.push(head + batch.join(',\n') + ';');
      statements++;
      batch = [];
      bytes = Buffer.byteLength(head);
    };
    if (derived.has(t.toLowerCase())) {
      // Compared after the load like every table: the triggers must have rebuilt the same keys.
      counts[t] = (db.query(`SELECT count(*) AS n FROM ${ident(t)}`).get() as { n: number }).n;
      continue;
    }
    for (const row of db.query(`SELECT ${tuple} AS v FROM ${ident(t)}`).values() as [string][]) {
      const v = row[0];
      const size = Buffer.byteLength(v) + 2;
      if (Buffer.byteLength(head) + size > MAX_STATEMENT_BYTES) {
        throw new RestoreRefused(`a row of ${t} is ${size} bytes, more than one D1 statement can carry (${MAX_STATEMENT_BYTES}): shorten it before moving to Workers`);
      }
      if (bytes + size > MAX_STATEMENT_BYTES) flush();
      batch.push(v);
      bytes += size;
      counts[t]++;
    }
    flush();
  }
  for (const t of tables) {
    if (!Object.hasOwn(DERIVED_TABLES, t)) continue;
    lines.push(DERIVED_TABLES[t]!.rebuild);
    statements += DERIVED_TABLES[t]!.rebuild.split(';').filter((q) => q.trim()).length;
  }
  // AUTOINCREMENT high-water marks: ids deleted on the Bun install must stay unused on Workers too.
  const seqs = db.query(`SELECT name, seq FROM sqlite_sequence WHERE name <> 'd1_migrations'`).all() as { name: string; seq: number }[];
  for (const { name, seq } of seqs) {
    lines.push(`UPDATE sqlite_sequence SET seq = ${seq} WHERE name = '${name.replaceAll("'", "''")}';`);
    lines.push(`INSERT INTO sqlite_sequence (name, seq) SELECT '${name.replaceAll("'", "''")}', ${seq} WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '${name.replaceAll("'", "''")}');`);
    statements += 2;
  }
  return { sql: lines.join('\n') + '\n', counts, statements };
}

async function putBlobsLocal(t: WorkerTarget, blobs: { key: string; path: string }[]) {
  if (!blobs.length) return;
  // The local R2 state exactly as `wrangler r2 object put --local` and `wrangler dev` keep it (one
  // workerd for all blobs instead of one wrangler per blob).
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({
    modules: true,
    script: 'export default { fetch: () => new Response(null, { status: 404 }) }',
    defaultPersistRoot: join(t.persistTo, 'v3'),
    r2Buckets: { BUCKET: t.bucket },
  });
  try {
    const bucket = (await mf.getR2Bucket('BUCKET')) as unknown as { put(key: string, value: Uint8Array, opts: { sha256: string }): Promise<unknown> };
    // A plain Uint8Array: miniflare's binding proxy refuses a Buffer.
    for (const b of blobs) await bucket.put(BLOB_PREFIX + b.key, new Uint8Array(readFileSync(b.path)), { sha256: b.key });
  } finally {
    await mf.dispose();
  }
}

async function putBlobsRemote(t: WorkerTarget, blobs: { key: string; path: string }[]) {
  const queue = [...blobs];
  const worker = async () => {
    for (let b = queue.shift(); b; b = queue.shift()) {
      await wrangler(['r2', 'object', 'put', `${t.bucket}/${BLOB_PREFIX}${b.key}`, '--file', b.path, '--remote']);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

export interface WorkerRestoreResult {
  manifest: BackupManifest;
  counts: Record<string, number>;
  blobs: number;
  statements: number;
}

/** The whole move (see the header). Throws RestoreRefused when refused before the target's rows changed. */
export async function restoreToWorker(archive: string, t: WorkerTarget, log: (line: string) => void = () => {}): Promise<WorkerRestoreResult> {
  const staging = mkdtempSync(join(tmpdir(), 'restore-worker-'));
  try {
    const manifest = verify(staging, await unpack(archive, staging));
    log(`verified ${manifest.members.length} members of ${archive}`);

    const db = new Database(join(staging, DATABASE_MEMBER));
    let data: ReturnType<typeof dataSql>;
    let schema: { type: string; name: string; sql: string | null }[];
    try {
      migrate(db);
      db.run(`UPDATE backups SET status = 'failed', error_msg = 'was running when the restored snapshot was taken' WHERE status = 'running'`);
      schema = db.query(SCHEMA_SQL).all() as typeof schema;
      data = dataSql(db);
    } finally {
      db.close();
    }
    const file = join(staging, 'data.sql');
    writeFileSync(file, data.sql);

    log(`applying this release's migrations to D1 ${t.database} (${t.remote ? 'remote' : `local, ${t.persistTo}`})`);
    await wrangler(['d1', 'migrations', 'apply', t.database, ...where(t)]);
    const [targetSchema, users] = await d1Query(t, `${SCHEMA_SQL}; SELECT count(*) AS n FROM users`);
    const key = (r: Record<string, unknown>) => `${r.type} ${r.name}: ${normalise(r.sql as string | null)}`;
    const want = new Set(schema.map(key));
    const got = new Set(targetSchema!.map(key));
    const missing = [...want].filter((k) => !got.has(k));
    const extra = [...got].filter((k) => !want.has(k));
    if (missing.length || extra.length) {
      throw new RestoreRefused(
        `the Worker's D1 schema differs from the snapshot's after both were migrated (${[...missing.map((m) => `only in the snapshot: ${m.slice(0, 80)}`), ...extra.map((m) => `only in D1: ${m.slice(0, 80)}`)].slice(0, 3).join('; ')}): deploy the same release as the migrations/ folder here`,
      );
    }
    const n = Number(users![0]?.n ?? 0);
    if (n > 0 && !t.replace) {
      throw new RestoreRefused(`the Worker's D1 database already holds ${n} user(s): pass --replace to overwrite it${t.remote ? ' (D1 Time Travel can bring it back)' : ''}`);
    }

    const blobs = manifest.members.filter((m) => m.path.startsWith(BLOB_PREFIX)).map((m) => ({ key: m.sha256, path: join(staging, m.path) }));
    log(`putting ${blobs.length} blob(s) into R2 bucket ${t.bucket}`);
    await (t.remote ? putBlobsRemote(t, blobs) : putBlobsLocal(t, blobs));

    log(`loading ${Object.values(data.counts).reduce((a, b) => a + b, 0)} rows in ${data.statements} statements`);
    await wrangler(['d1', 'execute', t.database, ...where(t), '--yes', '--file', file]);

    const tables = Object.keys(data.counts);
    // One statement per table: D1 allows at most 5 terms in a compound SELECT (UNION ALL).
    const rows = (await d1Query(t, tables.map((name) => `SELECT '${name}' AS t, count(*) AS n FROM ${ident(name)}`).join('; '))).flat();
    const landed = Object.fromEntries(rows.map((r) => [r.t as string, Number(r.n)]));
    const wrong = tables.filter((name) => landed[name] !== data.counts[name]);
    if (wrong.length) throw new Error(`after the load D1 holds other row counts than the snapshot: ${wrong.map((w) => `${w} ${landed[w]} (want ${data.counts[w]})`).join(', ')}`);
    return { manifest, counts: data.counts, blobs: blobs.length, statements: data.statements };
  } finally {
    stopChildren();
    rmSync(staging, { recursive: true, force: true });
  }
}
