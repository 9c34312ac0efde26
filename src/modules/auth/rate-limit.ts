// The fixed-window counters live in db/rate-limits.ts (http/auth.ts throttles wrong API-key
// secrets with them, and http/ may not import modules/); the auth module's files import them here.
export * from '../../db/rate-limits.ts';
