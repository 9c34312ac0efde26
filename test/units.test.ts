import { describe, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from '../src/config.ts';
import { assertPasswordAllowed } from '../src/core/password-policy.ts';
import { parseUserAgent } from '../src/core/user-agent.ts';
import { OP_PARAMS_MAX_BYTES, redact, serializeParams } from '../src/http/op-log.ts';
import { traceIdFromParent } from '../src/http/trace.ts';
import { MIGRATIONS_DIR, migrate } from '../src/adapters/bun/migrate.ts';
import { openSqlite } from '../src/adapters/bun/sqlite.ts';
import { containsPattern } from '../src/core/pagination.ts';

describe('configuration', () => {
  test('defaults', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({ PORT: 3000, DATABASE_PATH: './data/admin.db', FILES_DIR: './data/files', TOKEN_TTL_SECONDS: 2592000, CAPTCHA_ENABLED: true, ADMIN_LOGIN_NAME: 'admin', PASSWORD_MIN_LENGTH: 8, MAX_UPLOAD_BYTES: 50 * 1024 * 1024, MAX_IMAGE_BYTES: 10 * 1024 * 1024, TRUST_PROXY: false });
    expect(c.CORS_ORIGINS).toEqual([]);
  });

  test.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ CAPTCHA_ENABLED: 'maybe' }, 'CAPTCHA_ENABLED'],
    [{ NODE_ENV: 'production' }, 'JWT_SECRET'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ JWT_SECRET: 'too-short-even-locally' }, 'JWT_SECRET'],
    [{ PASSWORD_MIN_LENGTH: '4' }, 'PASSWORD_MIN_LENGTH'],
    [{ ADMIN_LOGIN_NAME: 'bad name!' }, 'ADMIN_LOGIN_NAME'],
  ])('%j is refused with one line naming %s', (env, name) => {
    try {
      parseConfig(env);
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toStartWith(`Invalid configuration: ${name} `);
      expect((e as Error).message).not.toContain('\n');
    }
  });

  test('production with a 32-byte secret starts; lists and booleans parse', () => {
    const c = parseConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), CORS_ORIGINS: 'http://a, http://b,', TRUST_PROXY: '1' });
    expect(c.CORS_ORIGINS).toEqual(['http://a', 'http://b']);
    expect(c.TRUST_PROXY).toBe(true);
  });
});

describe('password policy', () => {
  test('accepts a decent password', () => expect(() => assertPasswordAllowed('Tr0ub4dor&3x', 'alice', 8)).not.toThrow());
  test('counts characters, not bytes', () => expect(() => assertPasswordAllowed('密码密码密码密码', 'alice', 8)).not.toThrow());
  test.each([
    ['short', 'at least'],
    ['alice', 'at least'],
    ['AliceAlice', ''],
    ['qwertyuiop', 'too common'],
  ])('%s refused', (pw, rule) => {
    expect(() => assertPasswordAllowed(pw, pw === 'AliceAlice' ? 'aliceALICE' : 'alice', 8)).toThrow(rule);
  });
});

describe('user agent', () => {
  test.each([
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 'Edge 131', 'Windows 10/11'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15', 'Safari 17', 'macOS 10.15'],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'Firefox 133', 'Linux'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'Safari 17', 'iOS 17'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 'Chrome 131', 'Android 14'],
    ['curl/8.5.0', 'curl 8', 'Unknown'],
    ['', 'Unknown', 'Unknown'],
  ])('%s', (ua, browser, os) => expect(parseUserAgent(ua)).toEqual({ browser, os }));
});

describe('op-log params', () => {
  test('redacts password, secret and token keys at any depth', () => {
    expect(redact({ loginName: 'a', password: 'p', nested: { newPassword: 'x', apiToken: 't', list: [{ clientSecret: 's' }] } })).toEqual({
      loginName: 'a',
      password: '[REDACTED]',
      nested: { newPassword: '[REDACTED]', apiToken: '[REDACTED]', list: [{ clientSecret: '[REDACTED]' }] },
    });
  });

  test('also redacts look-alike keys a refused body may carry', () => {
    expect(redact({ pwd: 'p', apiKey: 'k', api_key: 'k', privateKey: 'x', sig: 's', authorization: 'Bearer x', code: 'admin', name: 'n' })).toEqual({
      pwd: '[REDACTED]', apiKey: '[REDACTED]', api_key: '[REDACTED]', privateKey: '[REDACTED]', sig: '[REDACTED]', authorization: '[REDACTED]', code: 'admin', name: 'n',
    });
  });

  test('caps at 2 KiB of UTF-8 without splitting a character', () => {
    const s = serializeParams({ remark: '汉'.repeat(5000) });
    expect(new TextEncoder().encode(s).length).toBeLessThanOrEqual(OP_PARAMS_MAX_BYTES);
    expect(s).toEndWith('…[truncated]');
    expect(s).not.toContain('\uFFFD');
  });
});

describe('traceparent', () => {
  test('version 00 with non-zero ids is accepted, upper case folded', () => {
    expect(traceIdFromParent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});

describe('LIKE patterns', () => {
  test('wildcards and the escape character are escaped', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

describe('migrator', () => {
  test('applies every file once, tracked in d1_migrations; a second run is a no-op', () => {
    const db = openSqlite(':memory:');
    expect(migrate(db).length).toBeGreaterThan(0);
    expect(migrate(db)).toEqual([]);
    const names = (db.query('SELECT name FROM d1_migrations').all() as { name: string }[]).map((r) => r.name);
    expect(names).toContain('0001_init.sql');
  });

  test('a migration that fails half-way leaves nothing behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mig-'));
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    writeFileSync(join(dir, '9999_broken.sql'), 'CREATE TABLE half_done (id INTEGER);\nINSERT INTO no_such_table VALUES (1);\n');
    const db = openSqlite(':memory:');
    expect(() => migrate(db, dir)).toThrow();
    expect(db.query(`SELECT name FROM sqlite_master WHERE name = 'half_done'`).get()).toBeNull();
    expect(db.query(`SELECT name FROM d1_migrations WHERE name = '9999_broken.sql'`).get()).toBeNull();
    // The good migrations before it are kept.
    expect(db.query(`SELECT name FROM d1_migrations WHERE name = '0001_init.sql'`).get()).not.toBeNull();
  });
});

describe('search text limits (D1 refuses LIKE patterns over 50 bytes)', () => {
  const { likeText } = require('../src/core/pagination.ts') as typeof import('../src/core/pagination.ts');
  test.each([
    ['a'.repeat(48), true],
    ['a'.repeat(49), false],
    ['汉'.repeat(16), true],
    ['汉'.repeat(17), false],
    ['%'.repeat(24), true],
    ['%'.repeat(25), false],
  ])('%s accepted: %p', (text, ok) => {
    expect(likeText().safeParse(text).success).toBe(ok);
  });
});

describe('SQLITE_EXCLUSIVE', () => {
  const { mkdtempSync } = require('node:fs') as typeof import('node:fs');
  const { Database } = require('bun:sqlite') as typeof import('bun:sqlite');
  const read = (path: string) => {
    const other = new Database(path);
    try {
      other.run('PRAGMA busy_timeout = 0');
      return other.query('SELECT count(*) AS n FROM roles').get();
    } finally {
      other.close();
    }
  };
  test('exclusive: another process cannot read the file while the server holds it', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'excl-')), 'a.db');
    const db = openSqlite(path, { exclusive: true });
    migrate(db);
    db.query('SELECT 1 FROM roles').get();
    expect(() => read(path)).toThrow(/locked/);
    db.close();
    expect(read(path)).toEqual({ n: 1 });
  });
  test('shared: another process can read while the server runs', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'shared-')), 'a.db');
    const db = openSqlite(path, { exclusive: false });
    migrate(db);
    expect(read(path)).toEqual({ n: 1 });
    db.close();
  });
});
