import { afterAll, describe, expect, test } from 'bun:test';
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../src/config.ts';
import { startBanner } from '../src/entry/banner.ts';
import { insideDefaultData } from '../src/entry/data-folders.ts';
import { cleanEnv, runEntry, startServer, stopServer } from './support/server-process.ts';

/*
 * Issue 25, a newcomer's first hour: the defaults (listen on this machine only unless
 * NODE_ENV=production; a plain-text banner naming the URL, /docs, the data folder and the first
 * login) and the messages (DATABASE_PATH a folder, a missing folder outside ./data, a new signing
 * secret, restore --help), each through the real entry or script.
 */

const dir = mkdtempSync(join(tmpdir(), 'first-hour-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const p of children) p.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});
const PASSWORD = 'First-Hour-Pass-2026';
const install = (name: string) => {
  mkdirSync(join(dir, name), { recursive: true });
  return { DATABASE_PATH: join(dir, name, 'admin.db'), FILES_DIR: join(dir, name, 'files'), BACKUP_DIR: join(dir, name, 'backups') };
};
/** The output once it holds `text` (the banner follows the "listening" line startServer waits for). */
async function outputWith(s: { output: () => string }, text: string): Promise<string> {
  for (let i = 0; i < 100 && !s.output().includes(text); i++) await Bun.sleep(50);
  return s.output();
}
/** The JSON log lines of an output, parsed; the rest (the banner) left out. */
const logLines = (out: string) => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('HOST: this machine only, unless NODE_ENV=production', () => {
  test('the default is 127.0.0.1; production listens on every interface; HOST set is kept', () => {
    expect(parseConfig({}).HOST).toBe('127.0.0.1');
    expect(parseConfig({ NODE_ENV: 'development' }).HOST).toBe('127.0.0.1');
    expect(parseConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).HOST).toBe('0.0.0.0');
    expect(parseConfig({ HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
    expect(parseConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), HOST: '10.0.0.5' }).HOST).toBe('10.0.0.5');
    expect(parseConfig({ HOST: '' }).HOST).toBe('127.0.0.1');
  });

  test('a real start without HOST listens on 127.0.0.1 and says how to listen everywhere', async () => {
    // cleanEnv sets HOST for the other tests; an empty value is unset.
    const s = await startServer({ ...install('host'), HOST: '', ADMIN_PASSWORD: PASSWORD }, children);
    expect(s.base).toStartWith('http://127.0.0.1:');
    expect(await outputWith(s, 'listens on every interface')).toContain('Reachable from this machine only (HOST=127.0.0.1); HOST=0.0.0.0 listens on every interface');
    expect(await stopServer(s)).toBe(0);
  }, 30_000);
});

describe('the start-up banner: one plain block', () => {
  test('first start: URL, /docs, data folder and the generated password; a restart: no password', async () => {
    const paths = install('banner');
    const first = await startServer(paths, children);
    const out = await outputWith(first, 'listens on every interface');
    const password = out.match(/First login: name "admin", password "([^"]+)"/)?.[1];
    expect(password?.length).toBeGreaterThan(10);
    const block = out.slice(out.indexOf('edge-admin is running'), out.indexOf('listens on every interface') + 'listens on every interface'.length);
    expect(block.split('\n')).toEqual([
      `edge-admin is running on ${first.base} (bun)`,
      `  API reference and login helper: ${first.base}/docs`,
      `  Data folder: ${join(dir, 'banner')} (database admin.db, files files/, backups backups/)`,
      `  First login: name "admin", password "${password}"`,
      '  (shown once: change it after logging in, or set ADMIN_PASSWORD before a first start)',
      '  Reachable from this machine only (HOST=127.0.0.1); HOST=0.0.0.0 listens on every interface',
    ]);
    // The block is text, not JSON; the log lines around it stay JSON (for machines) and short.
    expect(block).not.toContain('{');
    const migrations = logLines(out).find((l) => l.msg === 'migrations applied');
    expect(migrations).toMatchObject({ count: expect.any(Number), last: expect.stringMatching(/^\d{4}_.*\.sql$/) });
    // The password is the administrator's.
    const login = await fetch(`${first.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password }) });
    expect(login.status).toBe(200);
    expect(await stopServer(first)).toBe(0);

    const second = await startServer(paths, children);
    expect(await outputWith(second, 'listens on every interface')).toContain(`edge-admin is running on ${second.base} (bun)`);
    expect(second.output()).not.toContain('First login');
    expect(second.output()).not.toContain('password "');
    expect(await stopServer(second)).toBe(0);
  }, 60_000);

  test('the text: every interface, docs off, ADMIN_PASSWORD, memory, files elsewhere', () => {
    const config = { ...parseConfig({ HOST: '0.0.0.0', DOCS_ENABLED: 'false' }) };
    const text = startBanner({ url: 'http://0.0.0.0:3000', runtime: 'node', config, admin: {}, cwd: '/srv/app' });
    expect(text.trim().split('\n')).toEqual([
      'edge-admin is running on http://localhost:3000 (node)',
      '  API reference: off (DOCS_ENABLED=false)',
      '  Data folder: ./data (database admin.db, files files/, backups backups/)',
      '  First login: name "admin" with the ADMIN_PASSWORD you set',
      '  Listening on every network interface (HOST=0.0.0.0)',
    ]);
    const memory = startBanner({ url: 'http://127.0.0.1:1', runtime: 'bun', config: parseConfig({ DATABASE_PATH: ':memory:' }), cwd: '/srv/app' });
    expect(memory).toContain('Data folder: in memory (DATABASE_PATH=:memory:)');
    const apart = startBanner({ url: 'http://127.0.0.1:1', runtime: 'bun', config: parseConfig({ DATABASE_PATH: '/var/lib/ea/admin.db', FILES_DIR: '/mnt/blobs' }), cwd: '/srv/app' });
    expect(apart).toContain('  Data folder: /var/lib/ea (database admin.db)\n  Files: /mnt/blobs\n');
  });
});

describe('DATABASE_PATH and the data folders', () => {
  test('a folder as DATABASE_PATH is said to be a folder', () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const r = runEntry({ DATABASE_PATH: folder, FILES_DIR: join(dir, 'a-folder-files'), ADMIN_PASSWORD: PASSWORD });
    expect(r.status).toBe(78);
    expect(r.lines).toEqual([`DATABASE_PATH=${folder} is a folder, not a database file: set DATABASE_PATH to a file in it, e.g. ${folder}/admin.db`]);
  }, 30_000);

  test('a missing folder outside ./data is refused, nothing is created; CREATE_MISSING_DIRS=true creates it', async () => {
    const typo = join(dir, 'nonexistent', 'dir');
    const env = { DATABASE_PATH: join(typo, 'admin.db'), FILES_DIR: join(typo, 'files'), BACKUP_DIR: join(typo, 'backups'), ADMIN_PASSWORD: PASSWORD };
    const r = runEntry(env);
    expect(r.status).toBe(78);
    expect(r.lines).toEqual([
      `DATABASE_PATH=${env.DATABASE_PATH}: the folder ${typo} does not exist (a mistyped path would start a brand-new, empty install): fix the path, create the folder, or set CREATE_MISSING_DIRS=true to have it created`,
    ]);
    expect(existsSync(join(dir, 'nonexistent'))).toBe(false);

    // The same for the files and the backups: the database's folder exists, theirs does not.
    const base = install('files-typo');
    const files = runEntry({ ...base, FILES_DIR: join(dir, 'no-such-mount', 'files'), ADMIN_PASSWORD: PASSWORD });
    expect(files.status).toBe(78);
    expect(files.lines).toEqual([
      `FILES_DIR=${join(dir, 'no-such-mount', 'files')}: the folder ${join(dir, 'no-such-mount')} does not exist (a mistyped path would start a brand-new, empty install): fix the path, create the folder, or set CREATE_MISSING_DIRS=true to have it created`,
    ]);
    const backups = runEntry({ ...base, BACKUP_DIR: join(dir, 'no-such-disk', 'backups'), ADMIN_PASSWORD: PASSWORD });
    expect(backups.status).toBe(78);
    expect(backups.lines[0]).toStartWith(`BACKUP_DIR=${join(dir, 'no-such-disk', 'backups')}: the folder ${join(dir, 'no-such-disk')} does not exist`);

    const s = await startServer({ ...env, CREATE_MISSING_DIRS: 'true' }, children);
    expect(existsSync(env.DATABASE_PATH)).toBe(true);
    expect(existsSync(env.FILES_DIR)).toBe(true);
    expect(await stopServer(s)).toBe(0);
  }, 60_000);

  test("inside the project's ./data every missing folder is made (the default install)", () => {
    expect(insideDefaultData('./data/admin.db', '/p')).toBe(true);
    expect(insideDefaultData('data/deep/er/files', '/p')).toBe(true);
    expect(insideDefaultData('/p/data', '/p')).toBe(true);
    expect(insideDefaultData('./database/admin.db', '/p')).toBe(false);
    expect(insideDefaultData('./data/../elsewhere/admin.db', '/p')).toBe(false);
    expect(insideDefaultData('/other/data/admin.db', '/p')).toBe(false);
    // Through the entry, from a working directory without ./data: it is created, folders and all.
    const cwd = join(dir, 'project');
    mkdirSync(cwd);
    const r = spawnSync(process.execPath, [join(import.meta.dir, '../src/entry/bun.ts')], {
      cwd,
      env: { ...cleanEnv({ ADMIN_PASSWORD: PASSWORD, FILES_DIR: './data/deep/files', PORT: '1' }) },
      encoding: 'utf8',
      timeout: 20_000,
    });
    // Port 1 is refused to a normal user or taken: either way the start got past the folders.
    expect(existsSync(join(cwd, 'data/admin.db'))).toBe(true);
    expect(existsSync(join(cwd, 'data/deep/files'))).toBe(true);
    expect(r.stderr).not.toContain('does not exist');
  }, 30_000);
});

describe('the signing secret', () => {
  test('generating one is one log line saying where; a second start says nothing; a lost one is a warning about old tokens', async () => {
    const paths = install('secret');
    const secretFile = join(dir, 'secret', '.jwt-secret');
    const first = await startServer({ ...paths, ADMIN_PASSWORD: PASSWORD }, children);
    const generated = logLines(first.output()).filter((l) => String(l.msg).startsWith('generated a new token signing secret'));
    expect(generated).toEqual([expect.objectContaining({ level: 'info', file: secretFile })]);
    expect(generated[0]!.msg).toContain(secretFile);
    expect(await stopServer(first)).toBe(0);

    const second = await startServer({ ...paths, ADMIN_PASSWORD: PASSWORD }, children);
    expect(second.output()).not.toContain('signing secret');
    expect(await stopServer(second)).toBe(0);

    // As after a restore into a folder without the old install's secret.
    const before = readFileSync(secretFile, 'utf8');
    rmSync(secretFile);
    const third = await startServer({ ...paths, ADMIN_PASSWORD: PASSWORD }, children);
    const warned = logLines(third.output()).filter((l) => String(l.msg).startsWith('generated a new token signing secret'));
    expect(warned).toEqual([expect.objectContaining({ level: 'warn', file: secretFile })]);
    expect(warned[0]!.msg).toContain('tokens signed before are refused');
    expect(readFileSync(secretFile, 'utf8')).not.toBe(before);
    expect(await stopServer(third)).toBe(0);

    // JWT_SECRET set: no file, no line.
    const named = install('secret-env');
    const fourth = await startServer({ ...named, ADMIN_PASSWORD: PASSWORD, JWT_SECRET: 'y'.repeat(40) }, children);
    expect(fourth.output()).not.toContain('signing secret');
    expect(existsSync(join(dir, 'secret-env', '.jwt-secret'))).toBe(false);
    expect(await stopServer(fourth)).toBe(0);
  }, 90_000);
});

describe('npm run restore', () => {
  const RESTORE = join(import.meta.dir, '../scripts/restore.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [RESTORE, ...args], { env: cleanEnv({}), encoding: 'utf8', timeout: 20_000 });

  test('--help prints the usage to stdout and exits 0; a wrong call prints it to stderr and exits 64', () => {
    for (const flag of ['--help', '-h']) {
      const help = run(flag);
      expect({ flag, status: help.status, stderr: help.stderr }).toEqual({ flag, status: 0, stderr: '' });
      expect(help.stdout).toStartWith('usage: npm run restore -- <backup-….tar>');
    }
    const none = run();
    expect(none.status).toBe(64);
    expect(none.stdout).toBe('');
    expect(none.stderr).toStartWith('usage: npm run restore');
    expect(run('x.tar', '--to', 'mars').status).toBe(64);
  });

  test('a restore into a folder without a signing secret says the service will make a new one', async () => {
    const from = install('restore-from');
    const s = await startServer({ ...from, ADMIN_PASSWORD: PASSWORD }, children);
    const token = ((await (await fetch(`${s.base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ loginName: 'admin', password: PASSWORD }) })).json()) as any).data.token;
    const made = (await (await fetch(`${s.base}/app/sysBackup/create`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })).json()) as any;
    expect(made.status).toBe(200);
    expect(await stopServer(s)).toBe(0);
    const archive = join(from.BACKUP_DIR, made.data.name);
    const to = install('restore-to');
    writeFileSync(join(dir, 'restore-to', 'placeholder'), '');
    const r = spawnSync(process.execPath, [RESTORE, archive], { env: cleanEnv({ PORT: '1', ...to }), encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`${join(dir, 'restore-to', '.jwt-secret')} does not exist and JWT_SECRET is not set: the service will generate a new signing secret`);
  }, 60_000);
});

// `npm ci` used to end with seven "install-scripts … not yet covered by allowScripts" warnings that
// read like failures. package.json answers each: allowed (the runtimes and tools need their
// binaries) or denied (@scarf/scarf: install analytics). npm itself says what is still unanswered.
const review = spawnSync('npm', ['install-scripts', 'ls', '--json'], { cwd: join(import.meta.dir, '..'), encoding: 'utf8', timeout: 120_000 });
const reviewed = (() => {
  try {
    return JSON.parse(review.stdout) as { allowScripts: unknown[] };
  } catch {
    return undefined;
  }
})();
describe('npm ci', () => {
  test.skipIf(!reviewed)(
    reviewed ? 'every install script of a dependency is answered in package.json (allowScripts)' : `install scripts (skipped: this npm has no \`install-scripts ls\`: ${(review.stderr || review.stdout || String(review.error)).trim().split('\n')[0]})`,
    () => {
      expect(reviewed!.allowScripts).toEqual([]);
      const pkg = JSON.parse(readFileSync(join(import.meta.dir, '../package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
      expect(pkg.allowScripts['@scarf/scarf']).toBe(false);
    },
  );
});
