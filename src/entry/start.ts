import { Buffer } from 'node:buffer';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { createApp } from '../app.ts';
import { parseConfig, type Config } from '../config.ts';
import type { ClientFacts, Deps } from '../deps.ts';
import { errorFields, jsonLogger } from '../core/log.ts';
import type { Logger } from '../core/ports.ts';
import { serverDeps } from '../adapters/server/deps.ts';
import { migrate } from '../adapters/server/migrate.ts';
import type { OpenSqlite } from '../adapters/server/sqlite-binding.ts';
import { diskStorageProbe } from '../adapters/server/storage.ts';
import { serverBackupArchives } from '../adapters/server/backup-archive.ts';
import { createLifecycle } from '../core/readiness.ts';
import { bootstrapAdmin } from '../modules/users/index.ts';
import { MENU_PRESETS } from '../compat/presets.ts';
import { failInterruptedBackups } from '../modules/backups/index.ts';
import { applyScheduleConfig, failInterruptedRuns, tick } from '../modules/jobs/index.ts';
import { startJobTimer } from './job-timer.ts';
import { installShutdown } from './shutdown.ts';
import { startBanner } from './banner.ts';
import { ensureFolder, prepareDatabasePath } from './data-folders.ts';
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

/**
 * JWT_SECRET, or locally a random one generated once and kept beside the database. Generating one
 * is said in one line (with where it is): every token signed before, e.g. by the install a backup
 * was restored from, is refused from now on, and that should not be a mystery.
 */
function loadSecret(config: Config, log: Logger, freshInstall: boolean): Uint8Array {
  if (config.JWT_SECRET) return new TextEncoder().encode(config.JWT_SECRET);
  if (config.DATABASE_PATH === ':memory:') return crypto.getRandomValues(new Uint8Array(48));
  const file = join(dirname(config.DATABASE_PATH), '.jwt-secret');
  if (!existsSync(file)) {
    writeFileSync(file, Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString('base64url'), { mode: 0o600 });
    chmodSync(file, 0o600);
    log.log(
      freshInstall ? 'info' : 'warn',
      freshInstall
        ? `generated a new token signing secret in ${resolve(file)} (JWT_SECRET is not set); keep it with the database`
        : `generated a new token signing secret in ${resolve(file)} (JWT_SECRET is not set and the database's folder had none): tokens signed before are refused; to keep them, copy the old .jwt-secret here or set JWT_SECRET to the old secret`,
      { file: resolve(file) },
    );
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < 32) fail(`Invalid configuration: the stored secret in ${file} is too short; delete it to generate a new one`);
  return new TextEncoder().encode(secret);
}

/** Creates the first administrator on an empty database; what the banner says about it. */
async function bootstrap(deps: Deps): Promise<{ password?: string } | undefined> {
  try {
    const admin = await bootstrapAdmin(deps);
    if (!admin.created) return undefined;
    deps.log.log('info', 'administrator created', { loginName: deps.config.ADMIN_LOGIN_NAME, password: admin.generatedPassword ? 'generated' : 'ADMIN_PASSWORD' });
    // The first start (it created the administrator): the menus as the chosen client expects them.
    const preset = deps.config.MENU_PRESET;
    if (preset !== 'none') {
      await MENU_PRESETS[preset].apply(deps);
      deps.log.log('info', 'menu preset applied', { preset });
    }
    return { password: admin.generatedPassword };
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
  const folders = { createMissing: config.CREATE_MISSING_DIRS };
  const { existed } = await step(dbPath, () => prepareDatabasePath(config.DATABASE_PATH, folders));
  await step(filesDir, () => ensureFolder('FILES_DIR', config.FILES_DIR, folders));

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
    if (applied.length) log.log('info', 'migrations applied', { count: applied.length, last: applied.at(-1) });
  } catch (e) {
    sqlite.close();
    throw e;
  }
  const deps = serverDeps(
    { config, sqlite, secret: loadSecret(config, log, !existed), client: runtime.client },
    { log, lifecycle, storage: diskStorageProbe({ databasePath: config.DATABASE_PATH, filesDir: config.FILES_DIR }) },
  );
  deps.backups = serverBackupArchives({ dir: config.BACKUP_DIR, sql: sqlite.sql, openSqlite: runtime.openSqlite, blobs: deps.blobs! });
  await step({ name: 'BACKUP_DIR', value: config.BACKUP_DIR }, () => ensureFolder('BACKUP_DIR', config.BACKUP_DIR, folders));
  await step(dbPath, () => failInterruptedBackups(deps));
  const interrupted = await step(dbPath, () => failInterruptedRuns(deps));
  if (interrupted) log.log('warn', 'job runs interrupted by the previous stop were reported in the job log', { count: interrupted });
  // Uploads cut by a crash or kill left their staging files; none of ours is running yet (another
  // server sharing FILES_DIR may be: only files untouched for a minute go).
  const leftovers = await step(filesDir, () => deps.blobs!.purgeStaging(Date.now() - 60_000));
  if (leftovers) log.log('info', 'temporary upload files cleared', { count: leftovers });
  const admin = await step(dbPath, () => bootstrap(deps), exclusive);
  // BACKUP_EVERY_HOURS is the backup job's schedule until the job is changed through the API.
  const schedule = await step(dbPath, () => applyScheduleConfig(deps));
  if (schedule.applied) log.log('info', 'backup job scheduled from BACKUP_EVERY_HOURS', schedule);
  if (!schedule.exact && config.BACKUP_EVERY_HOURS > 0) {
    log.log('warn', 'BACKUP_EVERY_HOURS is neither a divisor of 24 nor 24: the backup job runs on the nearest cron schedule', schedule);
  }

  const app = createApp(deps);
  const port = { name: 'PORT', value: `${config.PORT} (HOST=${config.HOST})` };
  const server = await step(port, () =>
    runtime.serve((req, env) => app.fetch(req, env as object | undefined), { port: config.PORT, hostname: config.HOST }),
  ).catch((e: unknown) => {
    // The administrator exists now: its generated password must not be lost with the failed start.
    if (admin?.password) console.log(`Administrator created: name "${config.ADMIN_LOGIN_NAME}", password "${admin.password}" (shown once)`);
    throw e;
  });
  lifecycle.state = 'ready';

  // The jobs table drives the periodic work (modules/jobs; docs/jobs.md): a tick now, then every minute.
  const jobs = startJobTimer(() => tick(deps), log);

  const closeDatabase = () => {
    jobs.stop();
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
  console.log(startBanner({ url: server.url, runtime: runtime.name, config, admin }));
  const stop = async () => {
    shutdown.uninstall();
    lifecycle.state = 'stopping';
    await server.stop();
    closeDatabase();
  };
  return { deps, url: server.url, stop };
}
