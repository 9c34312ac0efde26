import { expect } from 'bun:test';
import type { AnyTestApp } from './app.ts';
import { snapshot } from './rbac.ts';

/** What a request answered: its status and, when it was JSON, the envelope. */
export interface Answer {
  status: number;
  json?: { status: number; msg: string; data: any; traceId: string };
}

/**
 * One request and what must come of it (after PocketBase's ApiScenario): the status, fields of the
 * envelope, and, for a refused request, that the listed tables are exactly as they were.
 */
export interface Scenario {
  method: 'GET' | 'POST';
  /** The path with its query string, if any. */
  path: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sends the request another way than t.call (multipart uploads, raw downloads). */
  send?: (token?: string) => Promise<Answer>;
  status: number;
  /** Fields the JSON envelope must contain. */
  json?: Record<string, unknown>;
  /** Tables the request must leave exactly as they were (rows compared before and after). */
  unchanged?: readonly string[];
}

/** Runs one scenario on a test app and returns the answer for further checks. */
export async function expectScenario(t: AnyTestApp, s: Scenario): Promise<Answer> {
  const tables = s.unchanged ?? [];
  const before = tables.length ? await snapshot(t, ...tables) : '';
  const answer: Answer = s.send ? await s.send(s.token) : await t.call(s.method, s.path, { token: s.token, body: s.body, headers: s.headers });
  // The route in the message, so a failing row of a table says which one it was.
  expect(`${s.method} ${s.path} → ${answer.status}`).toBe(`${s.method} ${s.path} → ${s.status}`);
  if (s.json) expect(answer.json).toMatchObject(s.json);
  if (tables.length) expect(await snapshot(t, ...tables)).toBe(before);
  return answer;
}

/** The Answer of a raw response (downloads are no envelope when they succeed). */
export async function answerOf(res: Response): Promise<Answer> {
  const json = res.headers.get('content-type')?.includes('application/json') ? ((await res.json()) as Answer['json']) : undefined;
  return { status: res.status, json };
}

/** The Answer of test/support/files.ts `upload` (its body is already read). */
export const answerOfUpload = (r: { status: number; json: unknown }): Answer => ({ status: r.status, json: r.json as Answer['json'] });

/** A request a holder of the route's code may make; built afresh for every caller (a write needs its own target). */
export interface GuardedRequest {
  body?: unknown;
  /** Query string without the `?`. */
  query?: string;
  send?: Scenario['send'];
}

/** A route guarded by a permission code, for `expectGuarded`. */
export interface GuardedOp {
  code: string;
  method: 'GET' | 'POST';
  path: string;
  request?: () => GuardedRequest | Promise<GuardedRequest>;
}

/** Bearer values that are no token of ours: junk, and junk shaped like a JWT. */
export const FORGED_TOKENS = ['not-a-jwt-token-at-all', 'not.a.jwt-token'];

/**
 * The auth table of one route, the same everywhere: anonymous and a forged token get 401 with an
 * error envelope, a caller without the code 403, and none of these changes `tables`; a holder of the
 * code gets 200 SUCCESS. (A refused write by a logged-in caller is recorded in op_log, so leave that
 * table out when the route is a write.) Returns the holder's answer.
 */
export async function expectGuarded(
  t: AnyTestApp,
  op: GuardedOp,
  callers: { refused: string; granted: string },
  tables: readonly string[] = [],
): Promise<Answer> {
  const run = async (token: string | undefined, status: number, json: Record<string, unknown> | undefined, unchanged: readonly string[]) => {
    const { body, query, send } = (await op.request?.()) ?? {};
    const path = query ? `${op.path}?${query}` : op.path;
    return expectScenario(t, { method: op.method, path, token, body, send, status, json, unchanged });
  };
  await run(undefined, 401, { status: 401, data: null }, tables);
  for (const forged of FORGED_TOKENS) await run(forged, 401, { status: 401, data: null }, tables);
  await run(callers.refused, 403, { status: 403, data: null }, tables);
  // Downloads and previews answer a holder with the bytes, not an envelope.
  const granted = await run(callers.granted, 200, undefined, []);
  if (granted.json) expect(granted.json).toMatchObject({ status: 200, msg: 'SUCCESS' });
  return granted;
}
