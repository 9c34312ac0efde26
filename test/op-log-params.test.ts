import { describe, expect, test } from 'bun:test';
import { OP_PARAMS_MAX_BYTES, redact, serializeParams } from '../src/http/op-log.ts';

// What the operation log keeps of a request body: secrets redacted, capped at 2 KiB.
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
