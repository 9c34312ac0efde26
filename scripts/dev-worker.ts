// `npm run dev:worker`: the Worker in local workerd with local D1 and R2, offline. It prints one line
// per step and, last, the URL and how to log in; wrangler's own output (hundreds of lines on a first
// start) goes to a log file it names.
// 1. makes sure .dev.vars (gitignored) has JWT_SECRET and ADMIN_PASSWORD, generating them once;
// 2. applies migrations/ to the local D1 database (`wrangler d1 migrations apply DB --local`);
// 3. starts `wrangler dev` (extra arguments are passed on, e.g. `npm run dev:worker -- --port 8788`)
//    and waits until it answers.
// DEV_WORKER_VARS, DEV_WORKER_STATE and DEV_WORKER_LOG move the vars file, the local state and the
// log elsewhere (the test runs it in a temporary folder).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { generatePassword } from '../src/modules/users/index.ts';

const ROOT = join(import.meta.dir, '..');
const VARS = process.env.DEV_WORKER_VARS ?? join(ROOT, '.dev.vars');
const STATE = process.env.DEV_WORKER_STATE ?? join(ROOT, '.wrangler/state');
const LOG = process.env.DEV_WORKER_LOG ?? join(ROOT, '.wrangler/dev-worker.log');
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
// Offline: no metrics, and miniflare's placeholder request.cf instead of fetching one. No colours
// or interactive session in a log file.
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', FORCE_COLOR: '0' };
const shown = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p) || '.');

function readVars(): Map<string, string> {
  const vars = new Map<string, string>();
  if (!existsSync(VARS)) return vars;
  for (const line of readFileSync(VARS, 'utf8').split('\n')) {
    const m = line.match(/^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/);
    if (m && m[2]) vars.set(m[1]!, m[2]);
  }
  return vars;
}

// --- 1. secrets ---------------------------------------------------------------------------------
const vars = readVars();
const added: string[] = [];
if (!vars.get('JWT_SECRET')) {
  const bytes = crypto.getRandomValues(new Uint8Array(48));
  vars.set('JWT_SECRET', Buffer.from(bytes).toString('base64url'));
  added.push('JWT_SECRET');
}
if (!vars.get('ADMIN_PASSWORD')) {
  vars.set('ADMIN_PASSWORD', generatePassword());
  added.push('ADMIN_PASSWORD');
}
if (added.length) {
  const existing = existsSync(VARS) ? readFileSync(VARS, 'utf8').replace(/\n*$/, '\n') : '# Local secrets for `wrangler dev` (never committed).\n';
  const lines = added.map((k) => `${k}="${vars.get(k)}"`).join('\n');
  writeFileSync(VARS, `${existing === '\n' ? '' : existing}${lines}\n`, { mode: 0o600 });
}
console.log(`secrets: ${shown(VARS)} ${added.length ? `(generated ${added.join(' and ')})` : '(kept)'}`);

// --- 2. migrations ------------------------------------------------------------------------------
mkdirSync(dirname(LOG), { recursive: true });
const log = openSync(LOG, 'w');
const hadState = existsSync(join(STATE, 'v3/d1'));
// No stdin: wrangler then applies without asking, as this only touches the local database.
const migrate = spawnSync('node', [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', STATE], {
  cwd: ROOT,
  env,
  stdio: ['ignore', log, log],
});
const migrationLog = readFileSync(LOG, 'utf8');
if (migrate.status !== 0) {
  console.error(`migrations: failed (wrangler exited with ${migrate.status}); its output is in ${shown(LOG)}:`);
  console.error(migrationLog.trim().split('\n').slice(-15).join('\n'));
  process.exit(migrate.status ?? 1);
}
// wrangler prints its status table once per migration: count each name marked done, once.
const applied = new Set([...migrationLog.matchAll(/│\s*(\d{4}_\S+\.sql)\s*│\s*✅/g)].map((m) => m[1]));
console.log(`migrations applied: ${applied.size}${applied.size ? '' : ' (the local database is up to date)'}  [${shown(STATE)}]`);

// --- 3. wrangler dev ----------------------------------------------------------------------------
const args = ['dev', '--local', '--persist-to', STATE, '--env-file', VARS, '--show-interactive-dev-session=false', ...process.argv.slice(2)];
const dev = spawn('node', [WRANGLER, ...args], { cwd: ROOT, env, stdio: ['ignore', log, log] });
closeSync(log);
console.log(`wrangler dev: starting, its output goes to ${shown(LOG)} (tail -f it to follow requests)`);
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => dev.kill(sig));
dev.on('exit', (code) => {
  if (!ready) {
    console.error(`wrangler dev exited with ${code} before it was ready; the end of ${shown(LOG)}:`);
    console.error(readFileSync(LOG, 'utf8').trim().split('\n').slice(-15).join('\n'));
  }
  process.exit(code ?? 0);
});

let ready = false;
const deadline = Date.now() + 120_000;
let url: string | undefined;
while (!ready) {
  if (Date.now() > deadline) {
    console.error(`wrangler dev did not answer within 120 s; see ${shown(LOG)}`);
    dev.kill('SIGTERM');
    process.exit(1);
  }
  await Bun.sleep(200);
  url ??= readFileSync(LOG, 'utf8').match(/Ready on (http:\/\/\S+)/)?.[1]?.replace(/\/$/, '');
  if (url) ready = await fetch(`${url}/health`).then((r) => r.ok, () => false);
}
const name = vars.get('ADMIN_LOGIN_NAME') ?? 'admin';
console.log(`ready: ${url}  (API reference and login helper: ${url}/docs)`);
// Last, where it cannot scroll away. The Worker creates the administrator from ADMIN_PASSWORD
// when the local database has no users yet; a database used before keeps its own password.
console.log(
  `log in: name "${name}", password "${vars.get('ADMIN_PASSWORD')}" (ADMIN_PASSWORD in ${shown(VARS)}` +
    `${hadState ? '; a local database used before keeps the password it had' : ''})`,
);
