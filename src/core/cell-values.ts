import { badRequest } from './errors.ts';

/** One cell of an export row, as the writers (xlsx-write.ts, csv.ts) accept it. */
export type CellValue = string | number | boolean | Date | null | undefined;

/**
 * Text a spreadsheet would read as a formula when it starts a cell (OWASP "CSV injection"):
 * = + - @, tab and carriage return, and their full-width forms, which some spreadsheet
 * input paths normalise to the ASCII ones.
 */
export const FORMULA_TRIGGER = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter for a time zone; RangeError for a name the runtime's Intl does not know. */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    if (formatters.size > 64) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Throws a 400 unless `timeZone` is an IANA name (or UTC) this runtime knows. */
export function assertTimeZone(timeZone: string): void {
  try {
    formatter(timeZone);
  } catch {
    throw badRequest(`Unknown time zone "${timeZone}": use an IANA name such as UTC or Asia/Shanghai`);
  }
}

/**
 * The wall-clock time of `date` in `timeZone`, as a Date whose UTC fields read as that wall clock
 * (what a spreadsheet cell, which has no time zone, should show). Whole seconds.
 */
export function wallClock(date: Date, timeZone: string): Date {
  if (timeZone === 'UTC') return new Date(Math.floor(date.getTime() / 1000) * 1000);
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(date)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const year = parts.year!;
  const wall = new Date(Date.UTC(year, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!));
  // Date.UTC maps years 0-99 to 1900-1999
  if (year < 100) wall.setUTCFullYear(year);
  return wall;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYY-MM-DD HH:mm:ss` of `date`'s wall clock in `timeZone`. */
export function formatDateTime(date: Date, timeZone = 'UTC'): string {
  const w = wallClock(date, timeZone);
  return `${pad(w.getUTCFullYear(), 4)}-${pad(w.getUTCMonth() + 1)}-${pad(w.getUTCDate())} ${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())}`;
}

/** A Date that holds a time (an invalid Date does not). */
export const isValidDate = (v: unknown): v is Date => v instanceof Date && !Number.isNaN(v.getTime());
