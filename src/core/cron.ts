import { Cron } from 'croner';
import { badRequest } from './errors.ts';

/**
 * 5-field cron expressions (minute hour day-of-month month day-of-week) for the scheduled jobs.
 * The schedule itself (next and previous times, time zones, daylight-saving gaps and repeats) is
 * croner's; this file checks the text first, field by field, so a mistake gets a message that
 * names the field and its range (croner reports a day-of-month 32 as "day: 31"), and keeps the
 * grammar to the portable one: numbers, `*`, ranges `a-b`, lists `a,b`, steps `*∕n` and `a-b/n`,
 * month names JAN-DEC and weekday names SUN-SAT (0 and 7 are both Sunday). Quartz's seconds,
 * years, `?`, `L`, `W` and `#` and the `@daily` shorthands are refused. Like Vixie cron, when
 * both day-of-month and day-of-week are restricted, a day matching EITHER fires.
 */

const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'], first: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'], first: 0 },
] as const;

type Field = (typeof FIELDS)[number];

/** The number a value stands for, or a message. */
function valueOf(text: string, f: Field): number | string {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n >= f.min && n <= f.max ? n : `${f.name}: ${text} is out of range ${f.min}-${f.max}`;
  }
  const names: readonly string[] | undefined = 'names' in f ? f.names : undefined;
  const i = names?.indexOf(text.toUpperCase()) ?? -1;
  if (i >= 0) return i + ('first' in f ? f.first : 0);
  return names ? `${f.name}: "${text}" is neither a number ${f.min}-${f.max} nor a name ${names[0]}-${names[names.length - 1]}` : `${f.name}: "${text}" is not a number ${f.min}-${f.max}`;
}

/** A message for the first mistake of one field, or null. */
function fieldError(text: string, f: Field): string | null {
  for (const item of text.split(',')) {
    if (item === '') return `${f.name}: empty item in the list "${text}"`;
    const [range, step, extra] = item.split('/');
    if (extra !== undefined) return `${f.name}: "${item}" has more than one /`;
    if (step !== undefined) {
      if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > f.max - f.min + 1) return `${f.name}: step "${step}" must be a number 1-${f.max - f.min + 1}`;
      if (range !== '*' && !range!.includes('-')) return `${f.name}: "${item}" steps from a single value: write */${step} or ${range}-${f.max}/${step}`;
    }
    if (range === '*') continue;
    const bounds = range!.split('-');
    if (bounds.length > 2 || bounds.some((b) => b === '')) return `${f.name}: "${range}" is not a value or a range a-b`;
    const values = bounds.map((b) => valueOf(b, f));
    // MON-SUN: a range that ends on Sunday ends on 7
    if (f.name === 'day-of-week' && values.length === 2 && values[1] === 0) values[1] = 7;
    const bad = values.find((v) => typeof v === 'string');
    if (bad !== undefined) return bad as string;
    if (values.length === 2 && (values[0] as number) > (values[1] as number)) return `${f.name}: range "${range}" runs backwards`;
  }
  return null;
}

const schedules = new Map<string, Cron>();

/** croner's schedule for a checked expression (kept: they are immutable once built). */
function schedule(expr: string, timeZone: string): Cron {
  const key = `${timeZone} ${expr}`;
  let c = schedules.get(key);
  if (!c) {
    c = new Cron(expr, { paused: true, mode: '5-part', timezone: timeZone, domAndDow: false, sloppyRanges: false });
    if (schedules.size > 256) schedules.clear();
    schedules.set(key, c);
  }
  return c;
}

/** Whitespace runs folded to one space, ends trimmed: the form jobs store. */
export const normalizeCron = (expr: string) => expr.trim().split(/\s+/).join(' ');

/** Why `expr` is not a usable 5-field expression, or null when it is. */
export function cronError(expr: string, timeZone = 'UTC'): string | null {
  const parts = normalizeCron(expr).split(' ');
  if (parts.length === 1 && parts[0]!.startsWith('@')) return `"${parts[0]}" shorthands are not supported: write the 5 fields (minute hour day-of-month month day-of-week)`;
  if (parts.length !== 5) {
    const quartz = parts.length === 6 || parts.length === 7 ? ' (Quartz seconds and years are not supported)' : '';
    return `expected 5 fields (minute hour day-of-month month day-of-week), got ${parts[0] === '' ? 0 : parts.length}${quartz}`;
  }
  for (const [i, text] of parts.entries()) {
    const f = FIELDS[i]!;
    if (!/^[0-9A-Za-z*,/-]+$/.test(text)) return `${f.name}: "${text}" holds a character other than digits, names, * , - /`;
    const why = fieldError(text, f);
    if (why) return why;
  }
  try {
    if (!schedule(normalizeCron(expr), timeZone).nextRun(new Date(0))) return 'the expression never fires (no such date, e.g. 30 February)';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return null;
}

/** Throws a 400 naming the mistake unless `expr` is a usable 5-field expression. */
export function assertCron(expr: string, timeZone = 'UTC'): void {
  const why = cronError(expr, timeZone);
  if (why) throw badRequest(`Invalid cron expression "${normalizeCron(expr).slice(0, 100)}": ${why}`);
}

/** The first time strictly after `after` that `expr` fires, in `timeZone` (null: never again). */
export function nextRun(expr: string, after: Date, timeZone = 'UTC'): Date | null {
  assertCron(expr, timeZone);
  return schedule(normalizeCron(expr), timeZone).nextRun(after);
}

/** The last time at or before `at` that `expr` fired, or null. */
export function previousRun(expr: string, at: Date, timeZone = 'UTC'): Date | null {
  assertCron(expr, timeZone);
  // croner excludes a run in the reference's own second: reference the next whole second
  const ref = new Date(Math.floor(at.getTime() / 1000) * 1000 + 1000);
  return schedule(normalizeCron(expr), timeZone).previousRuns(1, ref)[0] ?? null;
}

/** The times `expr` fires strictly after `after`, in order. */
export function runsAfter(expr: string, after: Date, timeZone = 'UTC'): Iterable<Date> {
  assertCron(expr, timeZone);
  return schedule(normalizeCron(expr), timeZone).enumerate(after);
}
