import { describe, expect, test } from 'bun:test';
import { assertPasswordAllowed } from '../src/core/password-policy.ts';

// The password policy: length in characters, not the login name, not a common password.
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
