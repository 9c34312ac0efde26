import { base64url } from 'jose';
import type { DbPorts, Ports } from '../../core/ports.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import { SUPER_ADMIN_ROLE } from '../../core/permissions.ts';
import { isoNow } from '../../core/time.ts';

/** A random password that passes every rule: 24 characters of base64url. */
export function generatePassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return base64url.encode(bytes);
}

/**
 * On an empty users table, creates the first administrator with the superAdmin role. Without a
 * configured ADMIN_PASSWORD a random one is generated and returned, to be shown once.
 */
export async function bootstrapAdmin(deps: Ports & DbPorts): Promise<{ created: boolean; generatedPassword?: string }> {
  const { config } = deps;
  // At start-up, outside any request: a runner with no caller.
  const run = new Runner(deps);
  const existing = await run.first(qb.selectFrom('users').select('id').limit(1).compile());
  if (existing) return { created: false };
  const generated = config.ADMIN_PASSWORD ? undefined : generatePassword();
  const password = config.ADMIN_PASSWORD ?? generated!;
  assertPasswordAllowed(password, config.ADMIN_LOGIN_NAME, config.PASSWORD_MIN_LENGTH, 'ADMIN_PASSWORD');
  const role = await run.first<{ id: number }>(qb.selectFrom('roles').select('id').where('code', '=', SUPER_ADMIN_ROLE).compile());
  if (!role) throw new Error(`the ${SUPER_ADMIN_ROLE} role is missing: the migrations did not run`);
  const now = isoNow(deps.clock);
  const hash = await deps.hasher.hash(password);
  // The user id is fixed up front so both rows can go in one atomic batch (D1 has no transactions).
  const userId = 1;
  await run.write(
    resultsOf([
      qb
        .insertInto('users')
        .values({ id: userId, login_name: config.ADMIN_LOGIN_NAME, password_hash: hash, nick_name: 'Administrator', status: 'enabled', created_at: now, updated_at: now })
        .compile(),
      qb.insertInto('user_role').values({ user_id: userId, role_id: role.id }).compile(),
    ]),
  );
  return generated ? { created: true, generatedPassword: generated } : { created: true };
}
