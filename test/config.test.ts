import { describe, expect, test } from 'bun:test';
import { ConfigError, parseConfig } from '../src/config.ts';

// parseConfig: defaults, refusals naming the variable, list and boolean parsing.
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
