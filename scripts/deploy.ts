// `npm run deploy`: the real Cloudflare deployment, never by accident.
// Without --confirm it only prints the steps (docs/deploy-cloudflare.md explains them).
// With --confirm it checks the prerequisites first and stops at the first one missing:
// a real database_id in wrangler.toml, a logged-in wrangler, the JWT_SECRET secret; then it
// applies the migrations to the remote D1 database and runs `wrangler deploy` (minify is set in wrangler.toml), then prints the next steps.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..');
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');

const STEPS = `Deploying edge-admin to Cloudflare Workers (details: docs/deploy-cloudflare.md)

  1. npx wrangler login
  2. npx wrangler d1 create edge-admin --location weur
                                                  → put the printed database_id into wrangler.toml
     (--location: wnam, enam, weur, eeur, apac or oc — next to most of your users; it cannot change later)
  3. npx wrangler r2 bucket create edge-admin-files
  4. npx wrangler secret put JWT_SECRET            (at least 32 random bytes, e.g. openssl rand -base64 48)
     npx wrangler secret put ADMIN_PASSWORD        (the first administrator's password)
  5. npx wrangler d1 migrations apply DB --remote
  6. npx wrangler deploy                          (minify, observability, limits, placement: wrangler.toml)

The Workers Paid plan is required: an argon2id login needs ~50-150 ms of CPU, the Free plan allows 10 ms.

Run "npm run deploy -- --confirm" to check the prerequisites and run steps 5 and 6.`;

function wrangler(args: string[], capture = false) {
  const r = spawnSync('node', [WRANGLER, ...args], {
    cwd: ROOT,
    env: process.env,
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function stop(msg: string): never {
  console.error(`deploy stopped: ${msg}`);
  process.exit(1);
}

if (!process.argv.includes('--confirm')) {
  console.log(STEPS);
  process.exit(0);
}

const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8');
const id = toml.match(/database_id\s*=\s*"([^"]*)"/)?.[1] ?? '';
if (!id || /^0{8}-0{4}-0{4}-0{4}-0{12}$/.test(id)) {
  stop(
    'wrangler.toml still has the placeholder database_id. Create the database (choose the location next to most of your users:\n' +
      '  wnam, enam, weur, eeur, apac or oc; it cannot be moved later):\n\n' +
      '  npx wrangler d1 create edge-admin --location weur\n\n' +
      'then replace database_id = "00000000-0000-0000-0000-000000000000" in wrangler.toml with the printed id and run npm run deploy -- --confirm again.',
  );
}

if (!wrangler(['whoami'], true).out.match(/associated with the email|You are logged in/i)) stop('wrangler is not logged in; run `npx wrangler login`');

const secrets = wrangler(['secret', 'list', '--format', 'json'], true);
if (secrets.ok && !secrets.out.includes('"JWT_SECRET"')) stop('the JWT_SECRET secret is not set; run `npx wrangler secret put JWT_SECRET`');
if (secrets.ok && !secrets.out.includes('"ADMIN_PASSWORD"')) {
  console.warn('note: no ADMIN_PASSWORD secret; fine once an administrator exists, otherwise nobody can log in');
}
// A first deployment has no Worker to list secrets of yet: then JWT_SECRET is checked after deploy.
const firstDeploy = !secrets.ok;

if (!wrangler(['d1', 'migrations', 'apply', 'DB', '--remote']).ok) stop('applying the migrations to the remote D1 database failed');
const deployed = wrangler(['deploy'], true);
process.stdout.write(deployed.out);
if (!deployed.ok) stop('wrangler deploy failed');
const url = deployed.out.match(/https:\/\/\S+\.workers\.dev/)?.[0] ?? 'https://<your worker>';
if (firstDeploy) {
  console.log('\nFirst deployment: now set the secrets, then the Worker serves requests:\n  npx wrangler secret put JWT_SECRET\n  npx wrangler secret put ADMIN_PASSWORD');
}
console.log(
  `\nDeployed. Next:\n` +
    `  curl ${url}/health                      → {"status":200,...}\n` +
    `  log in as ${'"admin"'} (ADMIN_LOGIN_NAME) with ADMIN_PASSWORD at ${url}/docs, then change the password\n` +
    `  npx wrangler tail                          → the Worker's JSON log lines (also in the dashboard: Workers Logs)\n` +
    `  optional: enable D1 read replication (docs/deploy-cloudflare.md, "Read replicas"; D1_READ_REPLICATION = "true" in [vars])`,
);
