/**
 * A value kept per app (its deps, or one of their objects), made on first use: caches of a process
 * or Worker isolate that must not be shared by two apps in one process (tests make many). Stored
 * as a non-enumerable property under a private symbol: a WeakMap lookup on every request cost more,
 * and a copy of the deps (`{ ...deps }`, another app) starts with caches of its own.
 */
export function perApp<T>(owner: object, key: symbol, make: () => T): T {
  const held = (owner as Record<symbol, T | undefined>)[key];
  if (held !== undefined) return held;
  const value = make();
  Object.defineProperty(owner, key, { value, enumerable: false, configurable: true });
  return value;
}
