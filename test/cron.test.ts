import { describe, expect, test } from 'bun:test';
import { assertCron, cronError, nextRun, previousRun } from '../src/core/cron.ts';
import { AppError } from '../src/core/errors.ts';
import { MISSED_COUNT_CAP, planRun } from '../src/core/misfire.ts';

// 5-field cron: validation messages, next/previous times (zones, daylight saving, names, the
// day-of-month OR day-of-week rule) and the misfire decision of a scheduler tick.

const at = (iso: string) => new Date(iso);
const next = (expr: string, after: string, tz = 'UTC') => nextRun(expr, at(after), tz)?.toISOString() ?? null;

describe('cron validation', () => {
  test.each([
    ['0 3 * * *'],
    ['*/15 * * * *'],
    ['0 9-18/2 * * MON-FRI'],
    ['30 2 1,15 JAN,jul *'],
    ['0 0 * * 0'],
    ['0 0 * * 7'],
    ['0 0 * * SAT-SUN'],
    ['  5   4  *  *  sun  '],
  ])('%s is valid', (expr) => expect(cronError(expr)).toBeNull());

  test.each([
    ['', 'expected 5 fields (minute hour day-of-month month day-of-week), got 0'],
    ['* * * *', 'got 4'],
    ['0 0 3 * * ?', 'got 6 (Quartz seconds and years are not supported)'],
    ['@daily', '"@daily" shorthands are not supported'],
    ['60 * * * *', 'minute: 60 is out of range 0-59'],
    ['* 24 * * *', 'hour: 24 is out of range 0-23'],
    ['* * 0 * *', 'day-of-month: 0 is out of range 1-31'],
    ['* * 32 * *', 'day-of-month: 32 is out of range 1-31'],
    ['* * * 13 *', 'month: 13 is out of range 1-12'],
    ['* * * * 8', 'day-of-week: 8 is out of range 0-7'],
    ['* * * FOO *', 'month: "FOO" is neither a number 1-12 nor a name JAN-DEC'],
    ['* * * * MONDAY', 'day-of-week: "MONDAY" is neither a number 0-7 nor a name SUN-SAT'],
    ['*/0 * * * *', 'minute: step "0" must be a number 1-60'],
    ['5/15 * * * *', 'minute: "5/15" steps from a single value: write */15 or 5-59/15'],
    ['10-5 * * * *', 'minute: range "10-5" runs backwards'],
    ['1,,2 * * * *', 'minute: empty item in the list "1,,2"'],
    ['0 0 L * *', 'day-of-month: "L" is not a number 1-31'],
    ['0 0 ? * *', 'day-of-month: "?" holds a character other than digits, names, * , - /'],
    ['0 0 * * 5#2', 'day-of-week: "5#2" holds a character'],
    ['0 0 30 2 *', 'the expression never fires'],
  ])('%p: %s', (expr, message) => {
    expect(cronError(expr)).toContain(message);
  });

  test('assertCron throws a 400 whose message names the expression and the mistake', () => {
    try {
      assertCron('0 25 * * *');
      throw new Error('not refused');
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).status).toBe(400);
      expect((e as AppError).message).toBe('Invalid cron expression "0 25 * * *": hour: 25 is out of range 0-23');
    }
  });

  test('an unknown time zone is an error too', () => {
    expect(cronError('0 3 * * *', 'Mars/Olympus')).toContain('Mars/Olympus');
  });
});

describe('nextRun / previousRun', () => {
  test('strictly after the given time; minute steps; ranges with steps', () => {
    expect(next('*/15 * * * *', '2024-01-01T00:15:00Z')).toBe('2024-01-01T00:30:00.000Z');
    expect(next('*/15 * * * *', '2024-01-01T00:14:59.999Z')).toBe('2024-01-01T00:15:00.000Z');
    expect(next('0 9-18/3 * * *', '2024-01-01T12:00:00Z')).toBe('2024-01-01T15:00:00.000Z');
    expect(next('0 9-18/3 * * *', '2024-01-01T18:00:00Z')).toBe('2024-01-02T09:00:00.000Z');
  });

  test('names: MON-FRI skips the weekend; JAN/JUL', () => {
    // 2024-01-05 is a Friday
    expect(next('0 9 * * MON-FRI', '2024-01-05T10:00:00Z')).toBe('2024-01-08T09:00:00.000Z');
    expect(next('0 0 1 JAN,JUL *', '2024-02-01T00:00:00Z')).toBe('2024-07-01T00:00:00.000Z');
    expect(next('0 0 * * 7', '2024-01-01T00:00:00Z')).toBe('2024-01-07T00:00:00.000Z');
    expect(next('0 0 * * MON-SUN', '2024-01-06T12:00:00Z')).toBe('2024-01-07T00:00:00.000Z');
  });

  test('day-of-month and day-of-week both set: either one fires (Vixie cron)', () => {
    // the 13th, or any Friday: from Mon 2024-09-09, Friday the 13th is also the next Friday
    expect(next('0 0 13 * FRI', '2024-09-09T00:00:00Z')).toBe('2024-09-13T00:00:00.000Z');
    expect(next('0 0 13 * FRI', '2024-09-13T00:00:00Z')).toBe('2024-09-20T00:00:00.000Z');
    expect(next('0 0 1 * MON', '2024-01-29T12:00:00Z')).toBe('2024-02-01T00:00:00.000Z');
  });

  test('time zones: 03:00 in Shanghai is 19:00 UTC the day before', () => {
    expect(next('0 3 * * *', '2024-01-01T00:00:00Z', 'Asia/Shanghai')).toBe('2024-01-01T19:00:00.000Z');
  });

  test('daylight saving (Europe/Berlin): 02:30 does not exist on 31 March 2024 and runs once on 27 October', () => {
    expect(next('30 2 * * *', '2024-03-30T12:00:00Z', 'Europe/Berlin')).toBe('2024-03-31T01:00:00.000Z');
    expect(next('30 2 * * *', '2024-03-31T12:00:00Z', 'Europe/Berlin')).toBe('2024-04-01T00:30:00.000Z');
    const first = next('30 2 * * *', '2024-10-26T12:00:00Z', 'Europe/Berlin');
    expect(first).toBe('2024-10-27T00:30:00.000Z');
    expect(next('30 2 * * *', first!, 'Europe/Berlin')).toBe('2024-10-28T01:30:00.000Z');
  });

  test('previousRun: at or before, to the second', () => {
    expect(previousRun('*/15 * * * *', at('2024-01-01T00:15:00Z'))?.toISOString()).toBe('2024-01-01T00:15:00.000Z');
    expect(previousRun('*/15 * * * *', at('2024-01-01T00:14:59.999Z'))?.toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  test('an invalid expression throws the 400', () => {
    expect(() => nextRun('61 * * * *', new Date())).toThrow('minute: 61 is out of range 0-59');
  });
});

describe('planRun: what a scheduler tick runs', () => {
  const plan = (expr: string, lastRunAt: string | null, now: string, policy: 'fire' | 'skip') =>
    planRun({ expr, lastRunAt: lastRunAt ? at(lastRunAt) : null, now: at(now), policy });
  const iso = (d: Date | null) => d?.toISOString() ?? null;

  test.each(['fire', 'skip'] as const)('on time (%s): runs the due time, nothing missed', (policy) => {
    const d = plan('0 * * * *', '2024-01-01T00:00:05Z', '2024-01-01T01:00:20Z', policy);
    expect([d.run, d.reason, iso(d.scheduledFor), d.missed, iso(d.nextRunAt)]).toEqual([true, 'on-time', '2024-01-01T01:00:00.000Z', 0, '2024-01-01T02:00:00.000Z']);
  });

  test.each(['fire', 'skip'] as const)('not due yet (%s): no run', (policy) => {
    const d = plan('0 * * * *', '2024-01-01T01:00:03Z', '2024-01-01T01:30:00Z', policy);
    expect([d.run, d.reason, d.missed, iso(d.nextRunAt)]).toEqual([false, 'not-due', 0, '2024-01-01T02:00:00.000Z']);
  });

  test('missed runs, policy fire: ONE run now for all of them', () => {
    const d = plan('0 * * * *', '2024-01-01T00:00:05Z', '2024-01-01T05:10:00Z', 'fire');
    expect([d.run, d.reason, iso(d.scheduledFor), d.missed, iso(d.nextRunAt)]).toEqual([true, 'misfire-fired', '2024-01-01T05:00:00.000Z', 5, '2024-01-01T06:00:00.000Z']);
  });

  test('missed runs, policy skip: no run, wait for the next due time', () => {
    const d = plan('0 * * * *', '2024-01-01T00:00:05Z', '2024-01-01T05:10:00Z', 'skip');
    expect([d.run, d.reason, d.scheduledFor, d.missed, iso(d.nextRunAt)]).toEqual([false, 'misfire-skipped', null, 5, '2024-01-01T06:00:00.000Z']);
  });

  test('late but on time for the latest: earlier ones count as missed, the latest runs', () => {
    const d = plan('*/10 * * * *', '2024-01-01T00:00:01Z', '2024-01-01T00:30:30Z', 'skip');
    expect([d.run, d.reason, iso(d.scheduledFor), d.missed]).toEqual([true, 'on-time', '2024-01-01T00:30:00.000Z', 2]);
  });

  test('never ran: nothing counts as missed; only an on-time due time runs', () => {
    expect(plan('0 3 * * *', null, '2024-01-01T12:00:00Z', 'fire')).toMatchObject({ run: false, reason: 'not-due', missed: 0 });
    expect(plan('0 3 * * *', null, '2024-01-01T03:00:40Z', 'skip')).toMatchObject({ run: true, reason: 'on-time', missed: 0 });
  });

  test('a run-now after the due time covers it; a clock behind lastRunAt runs nothing', () => {
    expect(plan('0 * * * *', '2024-01-01T01:00:30Z', '2024-01-01T01:00:50Z', 'fire').run).toBe(false);
    expect(plan('0 * * * *', '2024-01-01T03:00:00Z', '2024-01-01T01:30:00Z', 'fire').run).toBe(false);
  });

  test('a minutely job down for a year: the count stops at the cap, quickly', () => {
    const t0 = performance.now();
    const d = plan('* * * * *', '2023-01-01T00:00:00Z', '2024-01-01T00:00:30Z', 'fire');
    expect([d.run, d.missed]).toEqual([true, MISSED_COUNT_CAP]);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
