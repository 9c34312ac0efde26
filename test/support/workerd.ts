import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Miniflare } from 'miniflare';
import type { D1Database } from '../../src/adapters/workers/bindings.ts';
import { EXECUTOR, remoteD1 } from './remote-d1.ts';
import { MIGRATIONS_DIR } from '../../src/adapters/bun/migrate.ts';

/**
 * Real, local D1 databases for tests: workerd's own D1 (Miniflare, the engine behind `wrangler
 * dev`), reached through Miniflare's binding proxy. One workerd serves the whole test process; it
 * declares POOL in-memory databases up front (a binding cannot be added later without a restart),
 * and each `freshD1()` takes an unused one, so every test app starts from an empty database.
 * Statements reach it through a small worker of our own, one HTTP request per execution
 * (test/support/remote-d1.ts), not through Miniflare's binding proxy.
 */
const POOL = 48;
let instances: Miniflare[] = [];
let starting: Promise<Miniflare> | undefined;
let used = POOL;

async function start(): Promise<Miniflare> {
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({
    modules: true,
    script: EXECUTOR,
    compatibilityDate: '2025-01-01',
    d1Databases: Object.fromEntries(Array.from({ length: POOL }, (_, i) => [`DB${i}`, `test-db-${instances.length}-${i}`])),
  });
  await mf.ready;
  instances.push(mf);
  return mf;
}

/**
 * SQL text split into statements the way D1 wants them (one per prepare): on `;` outside quotes
 * and comments, keeping a trigger's BEGIN … END body whole. Comments are dropped. (wrangler's own
 * splitter is exported too, but importing wrangler costs seconds per test process.)
 */
export function splitSql(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++;
      cur += '\n';
    } else if (ch === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2);
      if (i < 0) i = text.length;
      else i++;
      cur += ' ';
    } else if (ch === "'" || ch === '"' || ch === '`' || ch === '[') {
      const close = ch === '[' ? ']' : ch;
      const end = text.indexOf(close, i + 1);
      const stop = end < 0 ? text.length : end;
      cur += text.slice(i, stop + 1);
      i = stop;
    } else if (ch === ';' && !(/^\s*CREATE\s+(TEMP\s+|TEMPORARY\s+)?TRIGGER\b/i.test(cur) && !/\bEND\s*$/i.test(cur))) {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** The migrations as `wrangler d1 migrations apply --local` runs them: split, then one batch per file with its tracking row. */
export async function migrateD1(d1: D1Database, only: (name: string) => boolean = () => true): Promise<void> {
  await d1.prepare(
    'CREATE TABLE IF NOT EXISTS d1_migrations(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)',
  ).run();
  for (const name of readdirSync(MIGRATIONS_DIR).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f) && only(f)).sort()) {
    const statements = splitSql(readFileSync(join(MIGRATIONS_DIR, name), 'utf8')).map((q) => d1.prepare(q));
    await d1.batch([...statements, d1.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name)]);
  }
}

/** An empty D1 database in workerd with the migrations applied (those `only` accepts, if given). */
export async function freshD1(only?: (name: string) => boolean): Promise<D1Database> {
  if (used >= POOL) {
    starting = start();
    used = 0;
  }
  const binding = `DB${used++}`;
  const mf = await starting!;
  const d1 = remoteD1(mf, binding);
  await migrateD1(d1, only);
  return d1;
}

/** Stops every workerd this process started (test/support/teardown.ts calls it after the run). */
export async function stopWorkerd(): Promise<void> {
  const all = instances;
  instances = [];
  starting = undefined;
  used = POOL;
  await Promise.all(all.map((mf) => mf.dispose()));
}
