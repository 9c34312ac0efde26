import { sql, type SelectQueryBuilder } from 'kysely';
import { keyMayCarry } from '../../access/api-key-statement.ts';
import { userAuthorityGuard } from '../../access/containment.ts';
import { userInScope } from '../../access/data-scope.ts';
import { holdsCodeSql } from '../../access/holds-code.ts';
import { isSuperSql } from '../../access/auth-statement.ts';
import { hashKeyRandom, keySecret, newKeyRandom } from '../../core/api-key-secret.ts';
import { formatCidr, parseCidr } from '../../core/cidr.ts';
import { badRequest } from '../../core/errors.ts';
import { pageStatements, whereContains } from '../../core/pagination.ts';
import type { Ports } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { guardStatement } from '../../db/guards.ts';
import { idList } from '../../db/id-list.ts';
import { lastRow, readsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import type { ApiKey, ApiKeyAddInput, ApiKeyPageInput } from './api-keys.schemas.ts';

const DAY_MS = 86_400_000;
const SORT = { createdAt: 'k.created_at', expiresAt: 'k.expires_at', lastUsedAt: 'k.last_used_at', name: sql`k.name COLLATE NOCASE` };

/** `me` holds `code` now, or is a super admin (a validated integer id inlined: the text is SQL of ours). */
const mayReachOthers = (me: number, code: 'sys:apiKey:page' | 'sys:apiKey:revoke') =>
  sql.raw<boolean>(`(${isSuperSql(String(me))} OR ${holdsCodeSql(String(me), `'${code}'`)})`);

/**
 * The keys `me` may see or revoke: their own, and with `code` (or as a super admin) those of users
 * in their data scope (alias `k` for the key, `u` for its owner).
 */
const reachable = (me: number, code: 'sys:apiKey:page' | 'sys:apiKey:revoke') =>
  sql<boolean>`(k.user_id = ${me} OR (${mayReachOthers(me, code)} AND ${userInScope(me, sql.ref('u.id'), sql.ref('u.org_id'))}))`;

const CODES_OF_KEY = sql<string>`(SELECT json_group_array(code) FROM (SELECT kc.code FROM api_key_codes kc WHERE kc.key_id = k.id ORDER BY kc.code))`;

const selectKey = (q: SelectQueryBuilder<any, any, any>) =>
  q.select([
    'k.id',
    'k.name',
    'k.user_id',
    'u.login_name',
    'k.expires_at',
    'k.allowed_ips',
    'k.revoked_at',
    'k.last_used_at',
    'k.last_used_ip',
    'k.created_at',
    CODES_OF_KEY.as('codes'),
  ]);

interface KeyRow {
  id: number;
  name: string;
  user_id: number;
  login_name: string;
  expires_at: string;
  allowed_ips: string;
  revoked_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  created_at: string;
  codes: string;
}

const toKey = (now: number) => (r: KeyRow): ApiKey => ({
  id: r.id,
  name: r.name,
  userId: r.user_id,
  loginName: r.login_name,
  codes: JSON.parse(r.codes) as string[],
  expiresAt: r.expires_at,
  allowedIps: JSON.parse(r.allowed_ips) as string[],
  status: r.revoked_at !== null ? 'revoked' : Date.parse(r.expires_at) <= now ? 'expired' : 'active',
  lastUsedAt: r.last_used_at,
  lastUsedIp: r.last_used_ip,
  createdAt: r.created_at,
});

/** The caller's own keys, or with sys:apiKey:page (or as a super admin) the keys of users in their scope. One statement pair, one read. */
export async function pageKeys(deps: Ports, run: Runner, req: ApiKeyPageInput) {
  const me = run.userId;
  const now = deps.clock.now();
  const at = new Date(now).toISOString();
  let filtered = qb.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id').where(reachable(me, 'sys:apiKey:page'));
  filtered = whereContains(filtered, 'k.name', req.params.name);
  if (req.params.userId !== undefined) filtered = filtered.where('k.user_id', '=', req.params.userId);
  const status = req.params.status;
  if (status === 'revoked') filtered = filtered.where('k.revoked_at', 'is not', null);
  else if (status === 'active') filtered = filtered.where('k.revoked_at', 'is', null).where('k.expires_at', '>', at);
  else if (status === 'expired') filtered = filtered.where('k.revoked_at', 'is', null).where('k.expires_at', '<=', at);
  const page = pageStatements(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    select: selectKey,
    sortColumns: SORT,
    defaultSort: 'createdAt',
    idColumn: 'k.id',
    map: toKey(now),
  });
  return page.finish(await run.read(readsOf(...page.statements)));
}

/**
 * A new key for the caller, with its secret (shown once). Inside the batch: every code is carried
 * by a menu (400) and, for a caller who is not a super admin, held by the caller at that moment
 * (403): a grant revoked while the request runs cannot slip in.
 */
export async function addKey(deps: Ports, run: Runner, input: ApiKeyAddInput): Promise<ApiKey & { secret: string }> {
  const refused = input.codes.filter((c) => !keyMayCarry(c));
  if (refused.length > 0) {
    throw badRequest(`codes: ${refused.join(', ')} cannot be given to an API key (own account, API keys, roles and grants need a login)`);
  }
  const { API_KEY_DEFAULT_DAYS, API_KEY_MAX_DAYS } = deps.config;
  const now = deps.clock.now();
  const latest = now + API_KEY_MAX_DAYS * DAY_MS;
  let expires = now + Math.min(API_KEY_DEFAULT_DAYS, API_KEY_MAX_DAYS) * DAY_MS;
  if (input.expiresAt !== undefined) {
    expires = Date.parse(input.expiresAt);
    if (expires <= now) throw badRequest('expiresAt: must be in the future');
    if (expires > latest) throw badRequest(`expiresAt: must be at most ${API_KEY_MAX_DAYS} days from now`);
  }
  const blocks = [...new Set((input.allowedIps ?? []).map((t) => formatCidr(parseCidr(t) as Exclude<ReturnType<typeof parseCidr>, string>)))];
  const auth = await run.caller();
  const random = newKeyRandom();
  const hash = await hashKeyRandom(random);
  const codes = JSON.stringify(input.codes);
  const created = new Date(now).toISOString();
  const row = await run.write({
    batch: [
      guardStatement('key_code_unknown', sql`EXISTS (SELECT 1 FROM json_each(${codes}) j WHERE NOT EXISTS (SELECT 1 FROM menus m WHERE m.permission = j.value))`),
      ...(auth.isSuperAdmin
        ? []
        : [guardStatement('key_code_not_held', sql`EXISTS (SELECT 1 FROM json_each(${codes}) j WHERE NOT ${sql.raw(holdsCodeSql(String(auth.userId), 'j.value'))})`)]),
      qb
        .insertInto('api_keys')
        .values({
          user_id: auth.userId,
          name: input.name,
          secret_hash: hash,
          expires_at: new Date(expires).toISOString(),
          allowed_ips: JSON.stringify(blocks),
          created_at: created,
        })
        .compile(),
      sql`INSERT INTO api_key_codes (key_id, code) SELECT (SELECT id FROM api_keys WHERE secret_hash = ${hash}), value FROM json_each(${codes})`.compile(qb),
      selectKey(qb.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id')).where('k.secret_hash', '=', hash).compile(),
    ],
    finish: (results) => lastRow<KeyRow>(results)!,
  });
  const key = toKey(now)(row);
  return { ...key, secret: keySecret(key.id, random) };
}

/**
 * Revokes keys: the caller's own, and with sys:apiKey:revoke (or as a super admin) those of users
 * in their scope, within their authority (containment: 403, nothing changed). Unknown, already
 * revoked and unreachable ids are skipped. Returns how many were revoked; a revoked key fails on
 * the next request (its row is read by every request's auth statement).
 */
export async function revokeKeys(deps: Ports, run: Runner, ids: number[]): Promise<number> {
  const auth = await run.caller();
  const me = auth.userId;
  const reach = sql<number>`(SELECT k.id FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE k.id IN ${idList(ids)} AND k.revoked_at IS NULL AND ${reachable(me, 'sys:apiKey:revoke')})`;
  const othersOwners = sql<number>`(SELECT ok.user_id FROM api_keys ok WHERE ok.id IN ${reach} AND ok.user_id <> ${me})`;
  return run.write({
    batch: [
      ...userAuthorityGuard(auth, othersOwners),
      qb.updateTable('api_keys').set({ revoked_at: new Date(deps.clock.now()).toISOString(), revoked_by: me }).where('id', 'in', reach).compile(),
    ],
    errors: {
      messages: {
        outside_authority: "Refused: outside your authority (a key's owner holds a permission or a data scope that you do not hold)",
      },
    },
    finish: (results) => Number(results.at(-1)?.numAffectedRows ?? 0),
  });
}
