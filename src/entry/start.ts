import { Buffer } from 'node:buffer';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { createApp } from '../app';
import { ConfigError, parseConfig, type Config } from '../config';
import type { ClientFacts, Deps } from '../deps';
import { createKeys } from '../core/keys';
import { errorFields, jsonLogger } from '../core/log';
import type { Logger } from '../core/ports';
import { nodeArgon2Hasher } from '../adapters/bun/argon2';
import { diskBlobStore } from '../adapters/bun/disk-blobs';
import { migrate } from '../adapters/server/migrate';
import type { OpenSqlite, SqliteBinding } from '../adapters/server/sqlite-binding';
import { bootstrapAdmin } from '../modules/users/bootstrap';
import { cleanup } from '../modules/maintenance/cleanup';

/** A request handler as every server runtime calls it; `env` is what the app sees as `c.env`. */
export type FetchHandler = (req: Request, env?: unknown) => Response | Promise<Response>;

/** A listening server. `stop` stops accepting connections; it resolves once in-flight requests are done. */
export interface Listening {
  url: string;
  stop(): Promise<void>;
}

/** What differs between Bun, Deno and Node: the SQLite binding, the HTTP server, the socket address. */
export interface Runtime {
  name: 'bun' | 'deno' | 'node';
  openSqlite: OpenSqlite;
  serve(fetch: FetchHandler, opts: { port: number; hostname: string }): Listening | Promise<Listening>;
  client: ClientFacts;
}

/** A started server (the benchmark and tests reach the app and deps through it). */
export interface Started {
  deps: Deps;
  url: string;
  stop(): Promise<void>;
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** JWT_SECRET, or locally a random one generated once and kept beside the database. */
function loadSecret(config: Config): Uint8Array {
  if (config.JWT_SECRET) return new TextEncoder().encode(config.JWT_SECRET);
  if (config.DATABASE_PATH === ':memory:') return crypto.getRandomValues(new Uint8Array(48));
  const file = join(dirname(config.DATABASE_PATH), '.jwt-secret');
  if (!existsSync(file)) {
    writeFileSync(file, Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString('base64url'), { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < 32) fail(`Invalid configuration: the stored secret in ${file} is too short; delete it to generate a new one`);
  return new TextEncoder().encode(secret);
}

/** The one place the server's Deps are assembled (the same portable adapters on every runtime). */
function serverDeps(config: Config, log: Logger, sqlite: SqliteBinding, client: ClientFacts): Deps {
  return {
    config,
    db: sqlite.db,
    atomic: sqlite.atomic,
    read: sqlite.read,
    hasher: nodeArgon2Hasher(),
    blobs: diskBlobStore(config.FILES_DIR),
    clock: { now: () => Date.now() },
    ids: { uuid: () => crypto.randomUUID() },
    log,
    keys: createKeys(loadSecret(config)),
    client,
  };
}

async function bootstrap(deps: Deps) {
  const { config, log } = deps;
  try {
    const admin = await bootstrapAdmin(deps);
    if (admin.generatedPassword) {
      console.log(
        `\n  Administrator created: login name "${config.ADMIN_LOGIN_NAME}", password "${admin.generatedPassword}"\n` +
          '  This password is shown once. Change it after logging in (or set ADMIN_PASSWORD before the first start).\n',
      );
    } else if (admin.created) {
      log.log('info', 'administrator created from ADMIN_PASSWORD', { loginName: config.ADMIN_LOGIN_NAME });
    }
  } catch (e) {
    fail(`Invalid configuration: ${(e as Error).message}`);
  }
}

/**
 * The server start-up every runtime entry shares: config → deps → migrate → bootstrap → serve →
 * shutdown. Only `runtime` (SQLite binding, HTTP server, socket address) differs.
 */
export async function start(runtime: Runtime, env: Record<string, string | undefined> = process.env): Promise<Started> {
  let config: Config;
  try {
    config = parseConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) fail(e.message);
    throw e;
  }
  const log = jsonLogger(config.LOG_LEVEL);
  if (config.DATABASE_PATH !== ':memory:') mkdirSync(dirname(config.DATABASE_PATH), { recursive: true });
  mkdirSync(config.FILES_DIR, { recursive: true });

  const sqlite = runtime.openSqlite(config.DATABASE_PATH, { exclusive: config.SQLITE_EXCLUSIVE });
  const applied = migrate(sqlite.sql);
  if (applied.length) log.log('info', 'migrations applied', { applied });
  const deps = serverDeps(config, log, sqlite, runtime.client);
  await bootstrap(deps);

  const app = createApp(deps);
  const server = await runtime.serve((req, env) => app.fetch(req, env as object | undefined), { port: config.PORT, hostname: config.HOST });
  log.log('info', 'listening', { url: server.url, docs: config.DOCS_ENABLED ? '/docs' : 'off', runtime: runtime.name });

  const sweep = () =>
    cleanup(deps)
      .then((counts) => log.log('debug', 'cleanup', counts))
      .catch((err) => log.log('error', 'cleanup failed', errorFields(err)));
  void sweep();
  const timer = setInterval(sweep, 10 * 60_000);
  (timer as { unref?: () => void }).unref?.();

  const stop = async () => {
    clearInterval(timer);
    await server.stop();
    sqlite.close();
  };
  const exit = () => {
    // Not awaited: as before, the process ends now; in-flight requests are cut.
    void server.stop();
    sqlite.close();
    process.exit(0);
  };
  process.on('SIGINT', exit);
  process.on('SIGTERM', exit);
  return { deps, url: server.url, stop };
}
