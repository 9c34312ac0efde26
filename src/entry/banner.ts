import { dirname, relative, resolve } from 'node:path';
import process from 'node:process';
import type { Config } from '../config.ts';

export interface BannerFacts {
  url: string;
  runtime: string;
  config: Pick<Config, 'HOST' | 'DATABASE_PATH' | 'FILES_DIR' | 'BACKUP_DIR' | 'DOCS_ENABLED' | 'ADMIN_LOGIN_NAME'>;
  /** Set on the start that created the administrator. */
  admin?: { password?: string };
  cwd?: string;
}

const ALL_INTERFACES = new Set(['0.0.0.0', '::', '[::]']);

/**
 * What a person reads when the server is up: one short block of plain text (the JSON log lines are
 * for machines): where to go, where the data is and, on the first start, how to log in.
 */
export function startBanner({ url, runtime, config, admin, cwd = process.cwd() }: BannerFacts): string {
  const everywhere = ALL_INTERFACES.has(config.HOST);
  // 0.0.0.0 is where it listens, not an address to browse to.
  const browse = everywhere ? url.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//localhost') : url;
  const shown = (p: string) => {
    const rel = relative(cwd, resolve(cwd, p));
    return rel && !rel.startsWith('..') ? `./${rel}` : resolve(cwd, p);
  };
  const folder = config.DATABASE_PATH === ':memory:' ? undefined : dirname(resolve(cwd, config.DATABASE_PATH));
  const inside = (p: string) => folder !== undefined && !relative(folder, resolve(cwd, p)).startsWith('..');
  const data = folder
    ? `${shown(folder)} (database ${relative(folder, resolve(cwd, config.DATABASE_PATH))}` +
      `${inside(config.FILES_DIR) ? `, files ${relative(folder, resolve(cwd, config.FILES_DIR))}/` : ''}` +
      `${inside(config.BACKUP_DIR) ? `, backups ${relative(folder, resolve(cwd, config.BACKUP_DIR))}/` : ''})`
    : 'in memory (DATABASE_PATH=:memory:): gone when the server stops';
  const lines = [
    `edge-admin is running on ${browse} (${runtime})`,
    config.DOCS_ENABLED ? `  API reference and login helper: ${browse}/docs` : '  API reference: off (DOCS_ENABLED=false)',
    `  Data folder: ${data}`,
  ];
  if (folder && !inside(config.FILES_DIR)) lines.push(`  Files: ${shown(config.FILES_DIR)}`);
  if (admin?.password) {
    lines.push(`  First login: name "${config.ADMIN_LOGIN_NAME}", password "${admin.password}"`);
    lines.push('  (shown once: change it after logging in, or set ADMIN_PASSWORD before a first start)');
  } else if (admin) {
    lines.push(`  First login: name "${config.ADMIN_LOGIN_NAME}" with the ADMIN_PASSWORD you set`);
  }
  lines.push(
    everywhere
      ? `  Listening on every network interface (HOST=${config.HOST})`
      : `  Reachable from this machine only (HOST=${config.HOST}); HOST=0.0.0.0 listens on every interface`,
  );
  return `\n${lines.join('\n')}\n`;
}
