import { Buffer } from 'node:buffer';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { createApp } from '../app.ts';
import { parseConfig, type Config } from '../config.ts';
import type { ClientFacts, Deps } from '../deps.ts';
import { errorFields, jsonLogger } from '../core/log.ts';
import { serverDeps } from '../adapters/server/deps.ts';
import { migrate } from '../adapters/server/migrate.ts';
import type { OpenSqlite } from '../adapters/server/sqlite-binding.ts';
import { diskStorageProbe } from '../adapters/server/storage.ts';
import { serverBackupArchives } from '../adapters/server/backup-archive.ts';
import { createLifecycle } from '../core/readiness.ts';
import { bootstrapAdmin } from '../modules/users/index.ts';
import { applyRuoyiMenuPreset } from '../compat/ruoyi/index.ts';
import { cleanup } from '../modules/maintenance/index.ts';
import { failInterruptedBackups, scheduledBackup } from '../modules/backups/index.ts';
import { installShutdown } from './shutdown.ts';
import { checkIntegrity, refuseUnknownMigrations } from './startup-checks.ts';
import { exitOnStartupError, StartupError, step } from './startup-errors.ts';

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
  throw new StartupError(message);
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
    // The first start (it created the administrator): the menus as RuoYi-Vue3 expects them.
    if (admin.created && config.MENU_PRESET === 'ruoyi') {
      await applyRuoyiMenuPreset(deps);
      log.log('info', 'menu preset applied', { preset: 'ruoyi' });
    }
  } catch (e) {
    fail(`Invalid configuration: ${(e as Error).message}`);
  }
}

/**
 * The server start-up every runtime entry shares: config → deps → checks → migrate → bootstrap →
 * serve → graceful shutdown. Only `runtime` (SQLite binding, HTTP server, socket address) differs.
 * Any start-up failure prints one line naming the variable, the cause and the fix (the stack only at
 * LOG_LEVEL=debug) and exits with 78, so a supervisor stops restarting a misconfigured server.
 */
export async function start(runtime: Runtime, env: Record<string, string | undefined> = process.env): Promise<Started> {
  try {
    return await startOrThrow(runtime, env);
  } catch (e) {
    exitOnStartupError(e, env.LOG_LEVEL?.trim());
  }
}

async function startOrThrow(runtime: Runtime, env: Record<string, string | undefined>): Promise<Started> {
  const config = parseConfig(env);
  const log = jsonLogger(config.LOG_LEVEL);
  const lifecycle = createLifecycle('starting');
  const dbPath = { name: 'DATABASE_PATH', value: config.DATABASE_PATH };
  const filesDir = { name: 'FILES_DIR', value: config.FILES_DIR };
  const exclusive = { exclusive: config.SQLITE_EXCLUSIVE };
  if (config.DATABASE_PATH !== ':memory:') await step(dbPath, () => mkdirSync(dirname(config.DATABASE_PATH), { recursive: true }));
  await step(filesDir, () => mkdirSync(config.FILES_DIR, { recursive: true }));

  const sqlite = await step(
    dbPath,
    () => runtime.openSqlite(config.DATABASE_PATH, { exclusive: config.SQLITE_EXCLUSIVE, busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS }),
    exclusive,
  );
  try {
    const check = await step(dbPath, () => checkIntegrity(sqlite.sql, config.STARTUP_CHECK, config.DATABASE_PATH, config.STARTUP_CHECK_MAX_MB), exclusive);
    if (check) log.log('info', 'database check passed', { check: config.STARTUP_CHECK, ...check });
    await step(dbPath, () => refuseUnknownMigrations(sqlite.sql, config.DATABASE_PATH), exclusive);
    const applied = await step(dbPath, () => migrate(sqlite.sql), exclusive);
    if (applied.length) log.log('info', 'migrations applied', { applied });
  } catch (e) {
    sqlite.close();
    throw e;
  }
  const deps = serverDeps(
    { config, sqlite, secret: loadSecret(config), client: runtime.client },
    { log, lifecycle, storage: diskStorageProbe({ databasePath: config.DATABASE_PATH, filesDir: config.FILES_DIR }) },
  );
  deps.backups = serverBackupArchives({ dir: config.BACKUP_DIR, sql: sqlite.sql, openSqlite: runtime.openSqlite, blobs: deps.blobs! });
  await step({ name: 'BACKUP_DIR', value: config.BACKUP_DIR }, () => mkdirSync(config.BACKUP_DIR, { recursive: true }));
  await step(dbPath, () => failInterruptedBackups(deps));
  // Uploads cut by a crash or kill left their staging files; none of ours is running yet (another
  // server sharing FILES_DIR may be: only files untouched for a minute go).
  const leftovers = await step(filesDir, () => deps.blobs!.purgeStaging(Date.now() - 60_000));
  if (leftovers) log.log('info', 'temporary upload files cleared', { count: leftovers });
  await step(dbPath, () => bootstrap(deps), exclusive);

  const app = createApp(deps);
  const port = { name: 'PORT', value: `${config.PORT} (HOST=${config.HOST})` };
  const server = await step(port, () =>
    runtime.serve((req, env) => app.fetch(req, env as object | undefined), { port: config.PORT, hostname: config.HOST }),
  );
  lifecycle.state = 'ready';

  // Each cleanup run is bounded; when it leaves work (a backlog of logs, a large store) the next
  // run follows in a few seconds instead of at the next interval.
  let soon: ReturnType<typeof setTimeout> | undefined;
  const sweep = (): Promise<void> =>
    cleanup(deps)
      .then((counts) => {
        log.log('debug', 'cleanup', counts);
        if (counts.more) {
          soon = setTimeout(sweep, 5_000);
          (soon as { unref?: () => void }).unref?.();
        }
      })
      .catch((err) => log.log('error', 'cleanup failed', errorFields(err)));
  void sweep();
  const timer = setInterval(sweep, 10 * 60_000);
  (timer as { unref?: () => void }).unref?.();
  const backupTimer =
    config.BACKUP_EVERY_HOURS > 0
      ? setInterval(() => {
          void scheduledBackup(deps).then((r) => log.log(r.status === 200 ? 'info' : 'error', 'scheduled backup', r));
        }, config.BACKUP_EVERY_HOURS * 3_600_000)
      : undefined;
  (backupTimer as { unref?: () => void } | undefined)?.unref?.();

  const closeDatabase = () => {
    clearInterval(timer);
    clearTimeout(soon);
    clearInterval(backupTimer);
    // Fold the WAL back into the database file, so the file alone is a complete copy once stopped.
    try {
      sqlite.sql.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch (e) {
      log.log('warn', 'WAL checkpoint at shutdown failed', errorFields(e));
    }
    sqlite.close();
  };
  const shutdown = installShutdown({
    lifecycle,
    stopServer: () => server.stop(),
    finish: closeDatabase,
    timeoutMs: config.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    log,
  });
  // Only now, with the signal handlers in place: a supervisor (or a test) that sends SIGTERM as soon
  // as it reads this line must get the graceful shutdown, not the default kill.
  log.log('info', 'listening', { url: server.url, docs: config.DOCS_ENABLED ? '/docs' : 'off', runtime: runtime.name });
  const stop = async () => {
    shutdown.uninstall();
    lifecycle.state = 'stopping';
    await server.stop();
    closeDatabase();
  };
  return { deps, url: server.url, stop };
}
