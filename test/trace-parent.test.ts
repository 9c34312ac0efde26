import { describe, expect, test } from 'bun:test';
import { traceIdFromParent } from '../src/http/trace.ts';

// Trace ids taken over from a W3C traceparent header.
describe('traceparent', () => {
  test('version 00 with non-zero ids is accepted, upper case folded', () => {
    expect(traceIdFromParent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });
});
