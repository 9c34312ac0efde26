import type { Context, MiddlewareHandler } from 'hono';
import { errorFields } from '../core/log.ts';
import { qb } from '../db/compile.ts';
import { afterResponse } from './after-response.ts';
import { clientInfo } from './client.ts';

/**
 * Keys whose values never reach the log. Refused bodies are stored as sent, unknown keys included,
 * so the net is wide: pass/pwd, secrets, tokens, credentials, API and private keys, signatures.
 */
const SECRET_KEY = /pass|pwd|secret|token|credential|api[-_]?key|private[-_]?key|signature|^sig$|^auth/i;
export const OP_PARAMS_MAX_BYTES = 2048;

/** Deep copy with the values of password/secret/token-like keys replaced. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '[…]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) ? '[REDACTED]' : redact(v, depth + 1);
    return out;
  }
  return value;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** JSON of the redacted params, cut to at most OP_PARAMS_MAX_BYTES bytes of UTF-8. */
export function serializeParams(value: unknown): string {
  const json = JSON.stringify(redact(value)) ?? '';
  const bytes = enc.encode(json);
  if (bytes.length <= OP_PARAMS_MAX_BYTES) return json;
  const marker = '…[truncated]';
  const cut = dec.decode(bytes.slice(0, OP_PARAMS_MAX_BYTES - enc.encode(marker).length - 3)).replace(/\uFFFD$/, '');
  return cut + marker;
}

async function requestParams(c: Context): Promise<unknown> {
  if (c.get('opParams') !== undefined) return c.get('opParams');
  const validated = (c.req.valid as (t: 'json') => unknown)('json');
  if (validated !== undefined) return validated;
  const type = c.req.header('content-type') ?? '';
  if (type.includes('json')) {
    try {
      const text = await c.req.text();
      try {
        return JSON.parse(text);
      } catch {
        return `<unparseable body, ${text.length} chars>`;
      }
    } catch {
      return '<unreadable body>';
    }
  }
  const query = c.req.query();
  return Object.keys(query).length ? query : {};
}

/**
 * Records one op_log row per write operation, failed ones included (the status and message the
 * client got). Module and action come from the path `/app/<module>/<action>`, or from `opAction`
 * (the RuoYi dialect names ours for its own paths). A failure to write
 * the row is logged, never turned into a failed response.
 */
export const recordOperation: MiddlewareHandler = async (c, next) => {
  const deps = c.get('deps');
  const run = c.get('run');
  const started = deps.clock.now();
  await next();
  const named = c.get('opAction');
  const [, , module = '', action = ''] = named ? ['', '', named.module, named.action] : c.req.path.split('/');
  // The caller as the auth row found them (a 403 names them too). None: a 401, which gets no row,
  // as when the token is refused before this recorder runs.
  const auth = run.known;
  if (!auth) return;
  const info = clientInfo(c);
  const status = c.res.status;
  const row = {
    module,
    action,
    method: c.req.method,
    path: c.req.path.slice(0, 200),
    operator_id: auth.userId,
    operator_name: auth.loginName,
    ip: info.ip,
    user_agent: info.userAgent,
    params: serializeParams(await requestParams(c)),
    status,
    error_msg: status >= 400 ? (c.get('errorMsg') ?? null) : null,
    duration_ms: Math.max(0, Math.round(deps.clock.now() - started)),
    trace_id: c.get('traceId'),
    created_at: new Date(deps.clock.now()).toISOString(),
    api_key_id: auth.apiKey?.id ?? null,
    api_key_name: auth.apiKey?.name ?? null,
  };
  const write = run
    .record([qb.insertInto('op_log').values(row).compile()])
    .then(
      () => undefined,
      (err: unknown) => deps.log.log('error', 'op log write failed', { traceId: row.trace_id, ...errorFields(err) }),
    );
  await afterResponse(c, write);
};
