// `npm run dev:worker`: the Worker in local workerd with local D1 and R2, offline.
// 1. makes sure .dev.vars (gitignored) has JWT_SECRET and ADMIN_PASSWORD, generating them once;
// 2. applies migrations/ to the local D1 database (`wrangler d1 migrations apply DB --local`);
// 3. starts `wrangler dev` (extra arguments are passed on, e.g. `npm run dev:worker -- --port 8788`).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatePassword } from '../src/modules/users/index.ts';

const ROOT = join(import.meta.dir, '..');
const VARS = join(ROOT, '.dev.vars');
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
// Offline: no metrics, and miniflare's placeholder request.cf instead of fetching one.
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false' };

function readVars(): Map<string, string> {
  const vars = new Map<string, string>();
  if (!existsSync(VARS)) return vars;
  for (const line of readFileSync(VARS, 'utf8').split('\n')) {
    const m = line.match(/^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/);
    if (m && m[2]) vars.set(m[1]!, m[2]);
  }
  return vars;
}

const vars = readVars();
const added: string[] = [];
if (!vars.get('JWT_SECRET')) {
  const bytes = crypto.getRandomValues(new Uint8Array(48));
  vars.set('JWT_SECRET', Buffer.from(bytes).toString('base64url'));
  added.push('JWT_SECRET');
}
let newPassword: string | undefined;
if (!vars.get('ADMIN_PASSWORD')) {
  newPassword = generatePassword();
  vars.set('ADMIN_PASSWORD', newPassword);
  added.push('ADMIN_PASSWORD');
}
if (added.length) {
  const existing = existsSync(VARS) ? readFileSync(VARS, 'utf8').replace(/\n*$/, '\n') : '# Local secrets for `wrangler dev` (never committed).\n';
  const lines = added.map((k) => `${k}="${vars.get(k)}"`).join('\n');
  writeFileSync(VARS, `${existing === '\n' ? '' : existing}${lines}\n`, { mode: 0o600 });
  console.log(`.dev.vars: generated ${added.join(' and ')}`);
}
if (newPassword) {
  const stateExists = existsSync(join(ROOT, '.wrangler/state/v3/d1'));
  console.log(
    `\n  Local administrator: login name "${vars.get('ADMIN_LOGIN_NAME') ?? 'admin'}", password "${newPassword}" (kept in .dev.vars)\n` +
      (stateExists
        ? '  Note: .wrangler/state already holds a local database; the password applies only if it has no users yet\n' +
          '  (delete .wrangler/state to start from scratch).\n'
        : ''),
  );
}

// No stdin: wrangler then applies without asking, as this only touches the local database.
const migrate = spawnSync('node', [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local'], {
  cwd: ROOT,
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const dev = spawn('node', [WRANGLER, 'dev', '--local', ...process.argv.slice(2)], { cwd: ROOT, env, stdio: 'inherit' });
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => dev.kill(sig));
dev.on('exit', (code) => process.exit(code ?? 0));
