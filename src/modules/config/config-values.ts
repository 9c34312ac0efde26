import { sql } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { badRequest, forbidden } from '../../core/errors.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { heldBy, holdsStatement } from '../../access/held.ts';
import type { ReadPlan } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { staleSql, versionOf, versionRead, VersionedCache } from '../../db/versions.ts';

/** The built-in parameters: read by the service itself, seeded empty (migrations/0020), never deleted. */
export const BUILT_IN = {
  captchaEnabled: 'sys.account.captchaEnabled',
  initPassword: 'sys.user.initPassword',
  registerUser: 'sys.account.registerUser',
} as const;

/** Parameters whose value is a secret: shown by `value` only to who may use it, redacted in the op log. */
export const isSecretKey = (key: string) => key.toLowerCase() === BUILT_IN.initPassword.toLowerCase();

/**
 * The values a built-in parameter takes (400 otherwise); any value for a custom one. Empty always
 * means "follow the configuration".
 */
export function assertConfigValue(key: string, value: string, passwordMinLength: number): void {
  if (value === '') return;
  switch (key.toLowerCase()) {
    case BUILT_IN.captchaEnabled.toLowerCase():
      if (value !== 'true' && value !== 'false') throw badRequest(`value: ${BUILT_IN.captchaEnabled} is true, false or empty (empty: the CAPTCHA_ENABLED setting)`);
      return;
    case BUILT_IN.registerUser.toLowerCase():
      if (value !== 'false') throw badRequest(`value: ${BUILT_IN.registerUser} can only be false or empty: this service has no self-registration`);
      return;
    case BUILT_IN.initPassword.toLowerCase():
      // The login name is checked when a user is added with it; the rest of the policy now.
      assertPasswordAllowed(value, '', passwordMinLength, 'value');
      return;
  }
}

/*
 * `value?key=` and sysUser/add read parameters through a per-app (process / isolate) cache of the
 * whole table under the `configs` version (migrations/0020: every write to configs bumps it in
 * its own transaction). The read plan carries the version and, on the condition in SQL that the
 * cache is stale, the rows: it travels with the caller's auth statement (one round trip) and a
 * change is seen on the very next request in every isolate. Login and the captcha read the captcha
 * parameter inside the batches they make anyway (captchaOnSql): no cache needed there.
 */
const CONFIGS_IF_STALE_SQL = `SELECT config_key, config_value FROM configs WHERE ${staleSql}`;

/** Per app: every parameter's value by its key in lower case (keys are unique case-insensitively). */
const caches = new WeakMap<object, VersionedCache<Map<string, string>, never>>();
function configCache(deps: Ports) {
  let cache = caches.get(deps);
  if (!cache) caches.set(deps, (cache = new VersionedCache(0)));
  return cache;
}

/** The plan that reads one parameter's value (undefined: no such key) through the cache. */
export function configValuePlan(deps: Ports, key: string): ReadPlan<string | undefined> {
  const cache = configCache(deps);
  const held = cache.held;
  return {
    reads: [versionRead('configs'), { sql: CONFIGS_IF_STALE_SQL, parameters: ['configs', held?.version ?? -1] }],
    finish: ([version, rows]) => {
      // No rows when the cache is fresh (the condition in SQL): then the held snapshot answers.
      const values = new Map(((rows ?? []) as { config_key: string; config_value: string }[]).map((r) => [r.config_key.toLowerCase(), r.config_value]));
      return cache.at(versionOf(version), held, values).rows.get(key.toLowerCase());
    },
  };
}

/**
 * `GET sysConfig/value?key=` for any logged-in user: the value, or 404. A secret one (the initial
 * password) only for who adds users or reads parameters (403 otherwise): every logged-in user must
 * not learn the password of every new account.
 */
export async function readConfigValue(deps: Ports, run: Runner, key: string): Promise<string | undefined> {
  const plan = configValuePlan(deps, key);
  if (!isSecretKey(key)) return run.read(plan);
  const me = run.userId;
  return run.read({
    reads: [...plan.reads, holdsStatement(me, 'sys:user:add'), holdsStatement(me, 'sys:config:detail')],
    finish: (rows) => {
      if (!heldBy(rows[2]) && !heldBy(rows[3])) throw forbidden(`key: ${BUILT_IN.initPassword} is shown only to holders of sys:user:add or sys:config:detail`);
      return plan.finish(rows.slice(0, 2));
    },
  });
}

/**
 * The password sysUser/add gives a user added without one: sys.user.initPassword (400 while it is
 * empty). Read through the cache with the caller's auth statement: no round trip of its own.
 */
export async function initialPassword(deps: Ports, run: Runner): Promise<string> {
  const value = await run.read(configValuePlan(deps, BUILT_IN.initPassword));
  if (!value) throw badRequest(`password: is required (the parameter ${BUILT_IN.initPassword} that would give one is empty)`);
  return value;
}

/**
 * SQL: whether the captcha is on now (1/0): sys.account.captchaEnabled when set, else the
 * configuration (CAPTCHA_ENABLED). For statements of batches that login and the captcha make
 * anyway, so the parameter costs them no round trip.
 */
export const captchaOnSql = (configured: boolean) =>
  sql<number>`coalesce((SELECT CASE config_value WHEN 'true' THEN 1 WHEN 'false' THEN 0 END FROM configs WHERE config_key = ${BUILT_IN.captchaEnabled}), ${configured ? 1 : 0})`;
