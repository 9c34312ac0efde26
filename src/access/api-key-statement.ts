import { CompiledQuery } from 'kysely';
import { addressAllowed } from '../core/cidr.ts';
import type { Caller } from '../core/caller.ts';
import { AppError, forbidden } from '../core/errors.ts';
import type { PermissionCode } from '../core/permissions.ts';
import type { CallerCheck } from '../db/runner.ts';
import { AUTH_HOLDS_SQL, isSuperSql, ownerHoldings } from './auth-statement.ts';
import { MFA_REQUIRED_MSG } from '../db/guards.ts';
import { holdsCodeSql } from './holds-code.ts';

/**
 * The caller's check for a request made with an API key (`Authorization: Bearer ea_<id>_<secret>`,
 * docs/api-keys.md): the same shape as a token's (auth-statement.ts), so it travels at the head of
 * the request's first plan (one D1 round trip). Two statements: the key row (its hash matches, its
 * owner, whether the key carries the route's code, its expiry, revocation and address list), and
 * who-holds-what for the OWNER, shared with the token path's cache. A request passes only if the
 * key carries the code AND the owner holds it now (or is a super admin): a key never outlives its
 * owner's powers, and it acts with the owner's data scope and containment (the caller IS the owner).
 */
export const AUTH_KEY_SQL = `SELECT k.user_id AS user_id, k.name AS name, k.expires_at AS expires_at, k.revoked_at AS revoked_at,
  k.allowed_ips AS allowed_ips, k.last_used_at AS last_used_at, u.login_name AS login_name, u.status AS status,
  u.mfa_enabled AS mfa_enabled, coalesce(v.n, -2) AS version,
  CASE WHEN ?3 IS NULL THEN 0 ELSE EXISTS (SELECT 1 FROM api_key_codes kc WHERE kc.key_id = k.id AND kc.code = +?3) END AS key_has
FROM api_keys k JOIN users u ON u.id = k.user_id LEFT JOIN cache_versions v ON v.name = 'menus'
WHERE k.id = +?1 AND k.secret_hash = +?2`;

export const KEY_INVALID = 'Invalid API key';
export const KEY_REFUSED_OPERATION =
  'An API key cannot be used for this operation (own account, API keys, roles, grants and second factors need a login)';

/**
 * Operations no key may run, whatever it carries (contract: a key cannot manage keys, roles or
 * grants, nor its owner's password or second factor): routes without a code (own account,
 * logout), every sysApiKey operation, role writes, user role grants, and any second-factor code.
 */
const NEVER_FOR_KEYS: ReadonlySet<string> = new Set([
  'sys:apiKey:page',
  'sys:apiKey:add',
  'sys:apiKey:revoke',
  'sys:role:add',
  'sys:role:edit',
  'sys:role:delete',
  'sys:role:changeStatus',
  'sys:role:grantMenu',
  'sys:role:grantDataScope',
  'sys:user:grantRole',
]);
export const keyMayCarry = (code: string | null): boolean => code !== null && !NEVER_FOR_KEYS.has(code) && !/mfa/i.test(code);

interface KeyRow {
  user_id: number;
  name: string;
  expires_at: string;
  revoked_at: string | null;
  allowed_ips: string;
  last_used_at: string | null;
  login_name: string;
  status: string;
  mfa_enabled: number;
  version: number;
  key_has: number;
}

/** What the check learnt of the key, for recording its last use (http/auth.ts). */
export interface KeySeen {
  lastUsedAt: string | null;
}

export interface KeyCheckInput {
  code: PermissionCode | null;
  keyId: number;
  /** The owner's user id, known before the read (http/auth.ts keeps key → owner, which never changes). */
  ownerId: number;
  /** SHA-256 (hex) of the presented secret. */
  secretHash: string;
  clientIp: () => string;
  now: () => number;
  /** Keys the per-app cache of who holds what (the same as the token path's). */
  owner: object;
  /** Told what the key row said once it was judged valid (its last use). */
  seen?: (s: KeySeen) => void;
}

export function keyCallerCheck(input: KeyCheckInput): CallerCheck {
  const { code, keyId, ownerId, secretHash, now } = input;
  const holdings = ownerHoldings(input.owner, ownerId, code);
  return {
    userId: ownerId,
    sessionId: '',
    statements: [
      { sql: AUTH_KEY_SQL, parameters: [keyId, secretHash, code] },
      { sql: AUTH_HOLDS_SQL, parameters: [code, ownerId, holdings.heldVersion] },
    ],
    judge([keyRows, holdsRows]) {
      const row = keyRows?.[0] as KeyRow | undefined;
      if (!row || row.user_id !== ownerId) return { refusal: new AppError('UNAUTHORIZED', KEY_INVALID) };
      if (row.revoked_at !== null) return { refusal: new AppError('UNAUTHORIZED', 'This API key has been revoked') };
      if (Date.parse(row.expires_at) <= now()) return { refusal: new AppError('UNAUTHORIZED', 'This API key has expired') };
      if (row.status !== 'enabled') return { refusal: new AppError('UNAUTHORIZED', "This API key's owner is disabled") };
      const { isSuper, holds, mfaRole } = holdings.judge(row.version, holdsRows?.[0]);
      const caller: Caller = { userId: ownerId, sessionId: '', loginName: row.login_name, isSuperAdmin: isSuper, apiKey: { id: keyId, name: row.name } };
      // An owner whose role now requires a second factor they have not enrolled: their keys wait with them.
      if (mfaRole && row.mfa_enabled !== 1) return { caller, refusal: new AppError('FORBIDDEN', MFA_REQUIRED_MSG) };
      input.seen?.({ lastUsedAt: row.last_used_at });
      let allowed: string[] = [];
      try {
        allowed = JSON.parse(row.allowed_ips) as string[];
      } catch {
        allowed = ['invalid'];
      }
      if (!addressAllowed(allowed, input.clientIp())) return { caller, refusal: forbidden('This API key may not be used from this address') };
      if (!keyMayCarry(code)) return { caller, refusal: forbidden(KEY_REFUSED_OPERATION) };
      if (row.key_has !== 1) return { caller, refusal: forbidden(`This API key does not carry the permission ${code}`) };
      return isSuper || holds ? { caller } : { caller, refusal: forbidden() };
    },
    guards: (caller) => keyGuards(code, keyId, ownerId, caller.isSuperAdmin ? 'super' : 'holds', new Date(now()).toISOString()),
    openGuards: () => keyGuards(code, keyId, ownerId, 'either', new Date(now()).toISOString()),
  };
}

const guard = (rule: 'session_ended' | 'not_permitted', cond: string, params: unknown[]) =>
  CompiledQuery.raw(`INSERT INTO auth_guard_failures (rule) SELECT '${rule}' WHERE ${cond}`, params);

/**
 * The key's check as guards at the head of a write batch: the key is live and its owner enabled
 * (401), the key carries the code (403), and the owner holds it (or, for a plan made as a super
 * admin's, is still one).
 */
function keyGuards(code: PermissionCode | null, keyId: number, ownerId: number, as: 'super' | 'holds' | 'either', now: string): CompiledQuery[] {
  const out = [
    guard(
      'session_ended',
      `NOT EXISTS (SELECT 1 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.id = +? AND k.user_id = +? AND k.revoked_at IS NULL AND k.expires_at > +? AND u.status = 'enabled')`,
      [keyId, ownerId, now],
    ),
    guard('not_permitted', `NOT EXISTS (SELECT 1 FROM api_key_codes kc WHERE kc.key_id = +? AND kc.code = +?)`, [keyId, code]),
  ];
  if (as === 'super') out.push(guard('not_permitted', `NOT ${isSuperSql('+?')}`, [ownerId]));
  else if (as === 'holds') out.push(guard('not_permitted', `NOT ${holdsCodeSql('+?')}`, [code, ownerId]));
  else out.push(guard('not_permitted', `NOT (${isSuperSql('+?')} OR ${holdsCodeSql('+?')})`, [ownerId, code, ownerId]));
  return out;
}
