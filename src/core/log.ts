import type { LogFields, Logger, LogLevel } from './ports.ts';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** JSON-lines logger: one object per line with time, level, msg and the given fields (traceId…). */
export function jsonLogger(min: LogLevel, write: (line: string) => void = (l) => console.log(l)): Logger {
  const floor = rank[min];
  return {
    log(level, msg, fields) {
      if (rank[level] < floor) return;
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
    },
  };
}

/** Turns an unknown thrown value into loggable fields, stack included. */
export function errorFields(err: unknown): LogFields {
  if (err instanceof Error) return { error: err.message, errorName: err.name, stack: err.stack };
  return { error: String(err) };
}
