import { describe, expect, test } from 'bun:test';
import { containsPattern, likeText } from '../src/core/pagination.ts';

// Search text in page filters: LIKE wildcards escaped, and the 50-byte pattern limit D1 enforces.
describe('LIKE patterns', () => {
  test('wildcards and the escape character are escaped', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

describe('search text limits (D1 refuses LIKE patterns over 50 bytes)', () => {
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
