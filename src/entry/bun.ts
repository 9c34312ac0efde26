import type { Server } from 'bun';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createApp } from '../app';
import { ConfigError, parseConfig, type Config } from '../config';
import type { Deps } from '../deps';
import { createKeys } from '../core/keys';
import { errorFields, jsonLogger } from '../core/log';
import { nodeArgon2Hasher } from '../adapters/bun/argon2';
import { diskBlobStore } from '../adapters/bun/disk-blobs';
import { migrate } from '../adapters/bun/migrate';
import { bunAtomic, bunKysely, bunRead, openSqlite } from '../adapters/bun/sqlite';
import { bootstrapAdmin } from '../modules/users/bootstrap';
import { cleanup } from '../modules/maintenance/cleanup';

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

export async function main(env: Record<string, string | undefined> = process.env) {
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

  const sqlite = openSqlite(config.DATABASE_PATH, { exclusive: config.SQLITE_EXCLUSIVE });
  const applied = migrate(sqlite);
  if (applied.length) log.log('info', 'migrations applied', { applied });
  const db = bunKysely(sqlite);
  const deps: Deps = {
    config,
    db,
    atomic: bunAtomic(sqlite),
    read: bunRead(sqlite),
    hasher: nodeArgon2Hasher(),
    blobs: diskBlobStore(config.FILES_DIR),
    clock: { now: () => Date.now() },
    ids: { uuid: () => crypto.randomUUID() },
    log,
    keys: createKeys(loadSecret(config)),
    client: { socketAddress: (c) => (c.env as Server<unknown> | undefined)?.requestIP?.(c.req.raw)?.address },
  };

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

  const app = createApp(deps);
  const server = Bun.serve({
    port: config.PORT,
    hostname: config.HOST,
    // Bun's own cap would answer a bare 413 (no envelope, no CORS, no op-log row) before the app
    // runs; the app refuses oversize bodies itself, by Content-Length and on the stream.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: (req, srv) => app.fetch(req, srv),
  });
  log.log('info', 'listening', { url: `http://${server.hostname}:${server.port}`, docs: config.DOCS_ENABLED ? '/docs' : 'off' });

  const sweep = () =>
    cleanup(deps)
      .then((counts) => log.log('debug', 'cleanup', counts))
      .catch((err) => log.log('error', 'cleanup failed', errorFields(err)));
  void sweep();
  const timer = setInterval(sweep, 10 * 60_000);
  timer.unref?.();
  const stop = () => {
    server.stop();
    sqlite.close();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return server;
}

if (import.meta.main) await main();
