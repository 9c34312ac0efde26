// bun bench/workerd-rt/run.ts [project-dir] — per operation on workerd (wrangler dev --local, the
// production Worker over local D1/R2 with DB_DELAY_MS, default 20, added to every D1 call):
// D1 round trips (from the Server-Timing header), wall ms (median) and the CPU ms the workerd
// processes of this wrangler used per request (/proc; an upper bound of the isolate's CPU, it
// includes workerd itself and the local D1/R2). `npm run bench` runs it; RT_N sets the repetitions.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/e2e/servers.ts';
import { cpuMs, stopGroup, workerdUnder } from '../proc.ts';

const ROOT = resolve(process.argv[2] ?? join(import.meta.dir, '../..'));
const CONFIG = join(ROOT, 'bench/workerd-rt/wrangler.toml');
const N = Number(process.env.RT_N ?? 8);
const DELAY = Number(process.env.DB_DELAY_MS ?? 20);
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', CI: 'true' };
const PASSWORD = 'Rt-Bench-Pass-42';
const dir = mkdtempSync(join(tmpdir(), 'edge-rt-'));
const envFile = join(dir, 'empty.env');
writeFileSync(envFile, '');

const r = spawnSync('node', [WRANGLER, 'd1', 'migrations', 'apply', 'DB', '--local', '-c', CONFIG, '--persist-to', dir], { cwd: ROOT, env, encoding: 'utf8' });
if (r.status !== 0) throw new Error(r.stdout + r.stderr);
const [port, inspector] = [await freePort(), await freePort()];
const child = spawn(
  'node',
  [WRANGLER, 'dev', '--local', '-c', CONFIG, '--persist-to', dir, '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--show-interactive-dev-session=false', '--env-file', envFile,
    '--var', 'JWT_SECRET:rt-bench-secret-rt-bench-secret-rt-bench-01', '--var', `ADMIN_PASSWORD:${PASSWORD}`, '--var', 'CAPTCHA_ENABLED:false', '--var', 'LOG_REQUESTS:false', '--var', `DB_DELAY_MS:${DELAY}`],
  { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
);
let out = '';
child.stdout!.on('data', (b) => (out += b));
child.stderr!.on('data', (b) => (out += b));
const base = `http://127.0.0.1:${port}`;

async function call(method: string, path: string, token?: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}) },
    body: body instanceof FormData ? body : body !== undefined ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as { status: number; msg: string; data: any };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${json.msg}`);
  const rt = Number(res.headers.get('server-timing')?.match(/desc="(\d+) rt/)?.[1] ?? NaN);
  return { data: json.data, ms, rt };
}

try {
  for (let i = 0; ; i++) {
    if (i > 400 || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${out}`);
    if (await fetch(`${base}/health`).then((x) => x.ok, () => false)) break;
    await Bun.sleep(150);
  }
  const pids = workerdUnder(child.pid!);
  const admin = (await call('POST', '/auth/login', undefined, { loginName: 'admin', password: PASSWORD })).data.token as string;
  const codes = ['sys:role:grantMenu', 'sys:role:add'];
  const menus = (await call('GET', '/app/sysMenu/tree', admin)).data as { id: number; permission: string | null; children?: unknown[] }[];
  const flat: { id: number; permission: string | null }[] = [];
  const walk = (ms: any[]) => ms.forEach((m) => (flat.push(m), walk(m.children ?? [])));
  walk(menus);
  const delegateMenus = flat.filter((m) => m.permission && codes.includes(m.permission)).map((m) => m.id);
  const role = (await call('POST', '/app/sysRole/add', admin, { name: 'Delegate', code: 'delegate' })).data.id as number;
  await call('POST', '/app/sysRole/grantMenu', admin, { roleId: role, menuIds: delegateMenus });
  await call('POST', '/app/sysUser/add', admin, { loginName: 'delegate', password: PASSWORD, roleIds: [role] });
  const delegate = (await call('POST', '/auth/login', undefined, { loginName: 'delegate', password: PASSWORD })).data.token as string;
  const target = (await call('POST', '/app/sysRole/add', delegate, { name: 'Target', code: 'target' })).data.id as number;
  // The writes that read first (deferred auth for writes: the pre-read travels with the auth statement).
  const resetTarget = (await call('POST', '/app/sysUser/add', admin, { loginName: 'reset_target', password: PASSWORD })).data.id as number;
  const menu = (await call('POST', '/app/sysMenu/add', admin, { title: 'Bench', type: 'directory' })).data as { id: number; version: number };
  const passwords = [PASSWORD, `${PASSWORD}-b`];

  let seq = 0;
  const uploadForm = (size: number) => {
    const bytes = new Uint8Array(size).fill(seq % 251);
    new DataView(bytes.buffer).setUint32(0, ++seq);
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'application/octet-stream' }), `bench${seq}.bin`);
    return form;
  };
  const ops: [string, () => Promise<{ ms: number; rt: number }>][] = [
    ['guarded detail read', () => call('GET', '/app/sysUser/detail?id=1', admin)],
    ['page query (with count)', () => call('POST', '/app/sysUser/page', admin, {})],
    ['getLoginUserInformation', () => call('GET', '/app/sysLoginUser/getLoginUserInformation', admin)],
    ['login (captcha off)', () => call('POST', '/auth/login', undefined, { loginName: 'admin', password: PASSWORD })],
    ['add user', () => call('POST', '/app/sysUser/add', admin, { loginName: `bench${++seq}`, password: PASSWORD })],
    [
      'edit user',
      async () => {
        const d = await call('GET', '/app/sysUser/detail?id=1', admin);
        return call('POST', '/app/sysUser/edit', admin, { id: 1, version: d.data.version, remark: `r${++seq}` });
      },
    ],
    ['grant role', () => call('POST', '/app/sysUser/grantRole', admin, { userId: 2, roleIds: [role] })],
    ['delegated grantMenu', () => call('POST', '/app/sysRole/grantMenu', delegate, { roleId: target, menuIds: seq++ % 2 ? delegateMenus : [] })],
    ['reset password', () => call('POST', '/app/sysUser/resetPassword', admin, { id: resetTarget, newPassword: `${PASSWORD}-${++seq}` })],
    [
      'menu edit',
      async () => {
        const x = await call('POST', '/app/sysMenu/edit', admin, { id: menu.id, version: menu.version, title: `Bench ${++seq}` });
        menu.version = x.data.version;
        return x;
      },
    ],
    // Distinct content each time (identical bytes would only add a reference). 2 MiB: the caller is
    // checked once 1 MiB has been read (UNCHECKED_UPLOAD_BYTES); 6 MiB: also over one R2 part.
    ['upload 1 KiB', () => call('POST', '/app/sysFile/upload', admin, uploadForm(1024))],
    ['upload 2 MiB', () => call('POST', '/app/sysFile/upload', admin, uploadForm(2 * 1024 * 1024))],
    ['upload 6 MiB', () => call('POST', '/app/sysFile/upload', admin, uploadForm(6 * 1024 * 1024))],
    // Last of these: it changes the admin's password (back and forth; this session stays).
    ['updatePassword', () => call('POST', '/app/sysLoginUser/updatePassword', admin, { oldPassword: passwords[0], newPassword: passwords.reverse()[0] })],
  ];
  console.log(`workerd (wrangler dev --local), ${DELAY} ms added to every D1 call, median of ${N}\n`);
  console.log('| operation | D1 round trips | wall ms (median) | workerd CPU ms / request |');
  console.log('|---|---|---|---|');
  for (const [name, run] of ops) {
    await run(); // warm-up
    const walls: number[] = [];
    let rt = 0;
    const cpu0 = cpuMs(pids);
    for (let i = 0; i < N; i++) {
      const x = await run();
      walls.push(x.ms);
      rt = x.rt;
    }
    const cpu = (cpuMs(pids) - cpu0) / N;
    walls.sort((a, b) => a - b);
    const editNote = name === 'edit user' ? ' (+ the detail read before it)' : '';
    console.log(`| ${name}${editNote} | ${rt} | ${walls[Math.floor(N / 2)]!.toFixed(0)} | ${cpu.toFixed(0)} |`);
  }
  // 100 distinct files deleted in one request.
  const ids: number[] = [];
  for (let i = 0; i < 100; i++) {
    const form = new FormData();
    form.append('file', new Blob([`file number ${i} ${Math.random()}`], { type: 'text/plain' }), `f${i}.txt`);
    ids.push((await call('POST', '/app/sysFile/upload', admin, form)).data.id);
  }
  const cpu0 = cpuMs(pids);
  const del = await call('POST', '/app/sysFile/delete', admin, { ids });
  console.log(`| delete 100 distinct files | ${del.rt} | ${del.ms.toFixed(0)} | ${(cpuMs(pids) - cpu0).toFixed(0)} |`);
} finally {
  await stopGroup(child);
  rmSync(dir, { recursive: true, force: true });
}
